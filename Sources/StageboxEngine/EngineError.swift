/// Why a change to the bus was refused.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    case noSuchPort(String)
    case portExists(String)
    case invalidPortName(String)
    case wrongDirection(from: String, fromKind: PortKind, to: String, toKind: PortKind)
    case channelMismatch(from: String, fromChannels: Int, to: String, toChannels: Int)
    case alreadyConnected(from: String, to: String)
    case notConnected(from: String, to: String)
    case cycle(from: String, to: String)
    case builtinPort(String)
    case tooManyChannels(String, Int)

    public var description: String {
        switch self {
        case .noSuchPort(let name): return "no such port: \(name)"
        case .portExists(let name): return "a port named \(name) already exists"
        case .invalidPortName(let name):
            return "invalid port name '\(name)' (letters, digits, '.', '_' and '-', 1 to 64 characters)"
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
        case let .tooManyChannels(name, n): return "port \(name): \(n) channels is out of range (1 to 32)"
        }
    }
}
