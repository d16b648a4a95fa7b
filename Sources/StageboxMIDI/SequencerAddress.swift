/// A port of a sequencer client: `client:port`, as aconnect writes it.
public struct SequencerAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var client: Int
    public var port: Int

    public init(client: Int, port: Int) {
        self.client = client
        self.port = port
    }

    public var description: String { "\(client):\(port)" }

    public static func < (a: Self, b: Self) -> Bool { (a.client, a.port) < (b.client, b.port) }
}

/// A port of another client as the sequencer lists it, with what it can do.
public struct SequencerPort: Sendable, Equatable {
    public var address: SequencerAddress
    public var clientName: String
    public var portName: String
    /// Something Stagebox can read from: it can be subscribed to for reading.
    public var isSource: Bool
    /// Something Stagebox can write to.
    public var isDestination: Bool

    public init(address: SequencerAddress, clientName: String, portName: String, isSource: Bool, isDestination: Bool) {
        self.address = address
        self.clientName = clientName
        self.portName = portName
        self.isSource = isSource
        self.isDestination = isDestination
    }

    /// `Virtual Raw MIDI 1-0 / VirMIDI 1-0 (20:0)`.
    public var description: String { "\(clientName) / \(portName) (\(address))" }
}
