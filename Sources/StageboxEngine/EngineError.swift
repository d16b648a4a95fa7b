import StageboxPortRules

/// Why a change to the bus was refused.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    case noSuchPort(String)
    case portExists(String)
    /// A name, channel count or `PORT:CHANNEL` that breaks the port rules.
    case portRule(PortRuleViolation)
    case wrongDirection(from: String, fromKind: PortKind, to: String, toKind: PortKind)
    case channelMismatch(from: String, fromChannels: Int, to: String, toChannels: Int)
    case alreadyConnected(from: String, to: String)
    case notConnected(from: String, to: String)
    case cycle(from: String, to: String)
    case builtinPort(String)
    /// A connection selects a channel the port does not have.
    case noSuchChannel(port: String, channel: Int, channels: Int)
    /// A connection would carry a channel the `existing` one between the same ports carries.
    case overlaps(Connection, existing: Connection)

    public var description: String {
        switch self {
        case .noSuchPort(let name): return "no such port: \(name)"
        case .portExists(let name): return "a port named \(name) already exists"
        case .portRule(let violation): return violation.description
        case let .wrongDirection(from, fk, to, tk):
            return "cannot connect \(from) (\(fk.rawValue)) to \(to) (\(tk.rawValue)): "
                + "connections go from a sender or filter to a filter or receiver"
        case let .channelMismatch(from, fc, to, tc):
            return "cannot connect \(from) (\(fc) channels) to \(to) (\(tc) channels): "
                + "channel counts must be equal, or one side mono"
        case let .alreadyConnected(from, to): return "\(from) is already connected to \(to)"
        case let .notConnected(from, to): return "\(from) is not connected to \(to)"
        case let .cycle(from, to): return "connecting \(from) to \(to) would make a loop"
        case .builtinPort(let name): return "\(name) is built in and cannot be removed"
        case let .noSuchChannel(port, channel, channels):
            return "\(port) has \(channels) channel\(channels == 1 ? "" : "s") (1 to \(channels)): there is no channel \(channel)"
        case let .overlaps(connection, existing):
            return "\(connection) would mix a channel in twice: \(existing) already carries it"
        }
    }
}
