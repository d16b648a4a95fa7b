/// The channel messages the mapping reads and writes. Channels are 1–16, as musicians and the
/// configuration count them (the wire and ALSA count 0–15).
public enum MIDIMessage: Sendable, Equatable, CustomStringConvertible {
    case noteOn(channel: Int, note: Int, velocity: Int)
    case noteOff(channel: Int, note: Int, velocity: Int)
    case controlChange(channel: Int, controller: Int, value: Int)

    public var channel: Int {
        switch self {
        case .noteOn(let c, _, _), .noteOff(let c, _, _), .controlChange(let c, _, _): c
        }
    }

    /// What the message says about the key or controller it names: down (a note-on with a
    /// velocity, a controller at 64 or more) or up (a note-off, a note-on with velocity 0, a
    /// controller below 64).
    public var isDown: Bool {
        switch self {
        case .noteOn(_, _, let velocity): velocity > 0
        case .noteOff: false
        case .controlChange(_, _, let value): value >= 64
        }
    }

    /// The key or controller, so that a note-on and its note-off name the same thing.
    public var control: MIDIControl {
        switch self {
        case .noteOn(_, let n, _), .noteOff(_, let n, _): .note(n)
        case .controlChange(_, let n, _): .controller(n)
        }
    }

    public var description: String {
        switch self {
        case let .noteOn(c, n, v): "note-on \(n) velocity \(v) channel \(c)"
        case let .noteOff(c, n, v): "note-off \(n) velocity \(v) channel \(c)"
        case let .controlChange(c, n, v): "cc \(n) value \(v) channel \(c)"
        }
    }
}

/// A key (note number) or a controller (CC number), 0–127.
public enum MIDIControl: Sendable, Hashable, CustomStringConvertible {
    case note(Int)
    case controller(Int)

    public var description: String {
        switch self {
        case .note(let n): "note \(n)"
        case .controller(let n): "cc \(n)"
        }
    }
}
