import StageboxPortRules

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

/// A connection from a sender or filter to a filter or receiver: whole ports (`codec.in -> codec.out`)
/// or selected channels on either side (`codec.in:1 -> rec.in:2`, numbered from 1). A selected
/// channel counts as a mono port for the channel mapping, so `codec.in:1 -> codec.out` copies
/// channel 1 to every output channel and `codec.in -> rec.in:2` averages every input into channel 2.
public struct Connection: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The source and destination ports' names.
    public var from: String
    public var to: String
    /// The selected channels, 1-based; nil for the whole port.
    public var fromChannel: Int?
    public var toChannel: Int?

    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }

    public init(_ source: PortEndpoint, _ destination: PortEndpoint) {
        self.from = source.port
        self.to = destination.port
        self.fromChannel = source.channel
        self.toChannel = destination.channel
    }

    public var source: PortEndpoint { PortEndpoint(port: from, channel: fromChannel) }
    public var destination: PortEndpoint { PortEndpoint(port: to, channel: toChannel) }

    public var description: String { "\(source) -> \(destination)" }
}

/// The names of the built-in ports.
public enum BuiltinPort {
    public static let codecIn = "codec.in"
    public static let codecOut = "codec.out"
    public static let tone = "tone"
}
