/// Why a name, a channel count or a `PORT:CHANNEL` text breaks the port rules; the text every
/// site (engine, bus server, configuration) shows.
public enum PortRuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidPortName(String)
    case invalidClientName(String)
    case reservedName(String)
    case channelCount(port: String, Int)
    case invalidEndpoint(String)

    public var description: String {
        let range = "\(PortRules.channelRange.lowerBound) to \(PortRules.channelRange.upperBound)"
        switch self {
        case .invalidPortName(let name):
            return "invalid port name '\(name)' (letters, digits, '.', '_' and '-', 1 to \(PortRules.maxNameLength) characters)"
        case .invalidClientName(let name):
            return "invalid client name '\(name)' (letters, digits, '_' and '-', no '.', 1 to \(PortRules.maxNameLength) characters)"
        case .reservedName(let name):
            return "'\(name)' is reserved (\(PortRules.reservedNames.joined(separator: ", ")) name stagebox's own ports)"
        case let .channelCount(port, n):
            return "port \(port): \(n) channels is out of range (\(range))"
        case .invalidEndpoint(let text):
            return "'\(text)' is not PORT or PORT:CHANNEL (a channel number from \(range))"
        }
    }
}
