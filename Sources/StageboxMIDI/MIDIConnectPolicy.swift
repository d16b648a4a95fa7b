/// `[midi] connect`: which clients' ports are connected when found at start or when they appear.
public enum MIDIConnectPolicy: Sendable, Equatable {
    /// Every client but the system (0), Stagebox itself and "Midi Through" (which would echo
    /// Stagebox's own output back to it).
    case all
    /// None: peers are connected by hand (aconnect).
    case none
    /// Clients whose name is one of these, or begins with one ("Virtual Raw MIDI" for
    /// "Virtual Raw MIDI 1-0"); "Midi Through" only so.
    case clients([String])

    static let systemClient = 0
    static let midiThrough = "Midi Through"

    /// Whether the ports of client `client` named `name` are connected; `own` is Stagebox's
    /// client number.
    public func connects(client: Int, name: String, own: Int) -> Bool {
        guard client != Self.systemClient, client != own else { return false }
        switch self {
        case .all: return name != Self.midiThrough
        case .none: return false
        case .clients(let names): return names.contains { name == $0 || name.hasPrefix($0) }
        }
    }
}
