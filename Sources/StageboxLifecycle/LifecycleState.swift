/// Where the appliance's audio is in its life. One owner (`LifecycleMachine`) moves it.
public enum LifecycleState: String, Sendable, CaseIterable {
    /// Opening the codec for the first time.
    case starting
    /// The codec runs and periods are processed.
    case running
    /// Not in use for long enough: the outputs fade out, then the codec is closed.
    case suspending
    /// The codec is closed and no audio thread runs; nothing is in use.
    case suspended
    /// Something needs the codec again: it is reopened, pre-filled, started and faded in.
    case resuming
    /// The codec cannot be opened; it is tried again with backoff.
    case waitingForCodec = "waiting-for-codec"
    /// A clean stop: the outputs fade out, then the codec is closed.
    case stopping
}

/// What uses the bus: client ports, recordings and a take played back. While anything does,
/// the codec runs.
public struct BusUse: Sendable, Equatable {
    public var clientPorts: Int
    public var takes: Int
    public var playing: Int

    public init(clientPorts: Int = 0, takes: Int = 0, playing: Int = 0) {
        self.clientPorts = clientPorts
        self.takes = takes
        self.playing = playing
    }

    public var inUse: Bool { clientPorts > 0 || takes > 0 || playing > 0 }

    /// "2 clients' ports, recording, playing a take", or "not in use".
    public var description: String {
        var parts: [String] = []
        if clientPorts > 0 { parts.append("\(clientPorts) client port\(clientPorts == 1 ? "" : "s")") }
        if takes > 0 { parts.append("recording") }
        if playing > 0 { parts.append("playing a take") }
        return parts.isEmpty ? "not in use" : parts.joined(separator: ", ")
    }
}
