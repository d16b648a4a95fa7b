import StageboxProtocol

/// A client port as the server keeps it: what it is, and its shared rings for reports.
public struct ClientPortRecord: Sendable {
    public var name: String
    public var kind: String
    public var channels: Int
    public var clientRate: Int
    public var format: String
    /// Rings in the order audio flows: a filter has two.
    let rings: [SharedRingHandle]
    public let counters: ClientPortCounters
    /// A receiver that takes its sources apart.
    public var separate = false

    public var underruns: Int { rings.map { $0.ring.underruns }.reduce(0, +) }
    public var overruns: Int { rings.map { $0.ring.overruns }.reduce(0, +) }
    public var fill: Int { rings.first?.ring.available ?? 0 }
    /// The fill level the client holds its drift correction at (0 when it does not say).
    public var targetFill: Int { rings.first?.ring.targetFill ?? 0 }
    /// The client's conversion ratio (nil when its ring holds nonsense there).
    public var ratio: Double? { rings.first?.ring.ratio ?? 1 }
}

/// Keeps a ring reachable from records without making them non-Sendable.
struct SharedRingHandle: Sendable {
    let ring: SharedRing
}
