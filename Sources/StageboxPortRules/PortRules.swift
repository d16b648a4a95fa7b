/// What a port on the bus may be called and how wide it may be: the one definition the engine,
/// the bus server, the shared-memory rings and the configuration all check against.
public enum PortRules {
    /// The channels a port may have.
    public static let channelRange = 1...32
    /// The longest port or client name, in bytes.
    public static let maxNameLength = 64
    /// Owners no client may take: the built-in ports' (`codec.in`, `codec.out`, `tone`) and
    /// stagebox's own (a port listing names `stagebox` as the owner of the built-in ports).
    public static let reservedNames: [String] = ["codec", "stagebox", "tone"]

    /// Port names: letters, digits, `.`, `_`, `-`; 1 to 64 bytes (`codec.in`, `myapp.mic`).
    public static func checkPortName(_ name: String) throws(PortRuleViolation) {
        guard isWellFormed(name) else { throw .invalidPortName(name) }
    }

    /// Client names: a port name without `.` (a client's ports are `client.port`), and none of
    /// `reservedNames`.
    public static func checkClientName(_ name: String) throws(PortRuleViolation) {
        guard isWellFormed(name), !name.contains(".") else { throw .invalidClientName(name) }
        guard !reservedNames.contains(name) else { throw .reservedName(name) }
    }

    /// The name of a port a client makes, `client.port`: `port` has no `.` of its own.
    public static func checkClientPortName(_ port: String, client: String) throws(PortRuleViolation) {
        guard !port.contains(".") else { throw .invalidPortName(port) }
        try checkPortName(port)
        try checkPortName("\(client).\(port)")
    }

    /// Ports added beside the built-in ones must not take a reserved owner (`codec.x`, `tone`).
    public static func checkOwner(of name: String) throws(PortRuleViolation) {
        let owner = String(name.prefix { $0 != "." })
        guard !reservedNames.contains(owner) else { throw .reservedName(owner) }
    }

    /// A port's channel count: 1 to 32.
    public static func checkChannels(_ channels: Int, port: String) throws(PortRuleViolation) {
        guard channelRange.contains(channels) else { throw .channelCount(port: port, channels) }
    }

    private static func isWellFormed(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameLength && name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2E || b == 0x5F || b == 0x2D
        }
    }
}
