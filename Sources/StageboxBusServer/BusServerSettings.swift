import StageboxProtocol

/// How the bus server listens and what it allows.
public struct BusServerSettings: Sendable, Equatable {
    public var socketPath: String
    public var maxClients: Int
    public var maxPortsPerClient: Int
    /// How long the audio thread waits for a filter client, in percent of the period.
    public var filterDeadlinePercent: Int

    public init(socketPath: String = DefaultSocket.path, maxClients: Int = 32, maxPortsPerClient: Int = 16,
                filterDeadlinePercent: Int = 25) {
        self.socketPath = socketPath
        self.maxClients = maxClients
        self.maxPortsPerClient = maxPortsPerClient
        self.filterDeadlinePercent = filterDeadlinePercent
    }
}
