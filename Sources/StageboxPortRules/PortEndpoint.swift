/// One end of a connection: a whole port (`codec.in`) or one of its channels (`codec.in:1`,
/// numbered from 1 as JACK users count them).
public struct PortEndpoint: Sendable, Hashable, Codable, CustomStringConvertible {
    public var port: String
    /// The selected channel, 1-based; nil for the whole port.
    public var channel: Int?

    public init(port: String, channel: Int? = nil) {
        self.port = port
        self.channel = channel
    }

    /// Reads `PORT` or `PORT:CHANNEL`. A port name never holds `:`, so the last one splits.
    /// The channel must be a number in `PortRules.channelRange`; whether the port has that
    /// many channels is for whoever knows the port to say.
    public init(parsing text: String) throws(PortRuleViolation) {
        guard let colon = text.lastIndex(of: ":") else {
            self.init(port: text)
            return
        }
        let port = String(text[..<colon]), digits = text[text.index(after: colon)...]
        guard !port.isEmpty, !digits.isEmpty, digits.count <= 3,
              digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let channel = Int(digits), PortRules.channelRange.contains(channel)
        else { throw .invalidEndpoint(text) }
        self.init(port: port, channel: channel)
    }

    public var description: String { channel.map { "\(port):\($0)" } ?? port }
}
