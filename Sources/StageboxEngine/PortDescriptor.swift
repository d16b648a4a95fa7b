/// What a port does on the bus, in Audiobus's terms.
public enum PortKind: String, Sendable, CaseIterable, Codable {
    /// Puts audio on the bus (the codec's inputs, a client that plays, a generator).
    case sender
    /// Processes audio in place on its way from senders to receivers.
    case filter
    /// Takes audio off the bus (the codec's outputs, the recorder, a client that records).
    case receiver
}

/// A port as everyone but the audio thread sees it.
public struct PortDescriptor: Sendable, Hashable, Codable {
    /// Unique on the bus, `owner.port` (`codec.in`, `tone`, `myapp.mic`).
    public var name: String
    /// A human-readable title.
    public var title: String
    public var kind: PortKind
    public var channels: Int

    public init(name: String, title: String, kind: PortKind, channels: Int) {
        self.name = name
        self.title = title
        self.kind = kind
        self.channels = channels
    }
}

/// A connection from a sender or filter to a filter or receiver.
public struct Connection: Sendable, Hashable, Codable, CustomStringConvertible {
    public var from: String
    public var to: String

    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }

    public var description: String { "\(from) -> \(to)" }
}

/// The names of the built-in ports.
public enum BuiltinPort {
    public static let codecIn = "codec.in"
    public static let codecOut = "codec.out"
    public static let tone = "tone"
}
