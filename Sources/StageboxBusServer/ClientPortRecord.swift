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

    public var underruns: Int { Self.total(rings.map { $0.ring.underruns }) }
    public var overruns: Int { Self.total(rings.map { $0.ring.overruns }) }
    public var fill: Int { rings.first?.ring.available ?? 0 }
    /// The fill level the client holds its drift correction at (0 when it does not say).
    public var targetFill: Int { rings.first?.ring.targetFill ?? 0 }
    /// The client's conversion ratio (nil when its ring holds nonsense there).
    public var ratio: Double? { rings.first?.ring.ratio ?? 1 }

    /// Counts from the rings' headers, which the client can write: each is at most Int.max,
    /// and their sum stops there too (a hostile filter's two rings saying Int.max each trapped
    /// the server when its leave line added them).
    static func total(_ counts: [Int]) -> Int {
        counts.reduce(0) { sum, count in
            let (next, overflow) = sum.addingReportingOverflow(count)
            return overflow ? Int.max : next
        }
    }
}

/// Keeps a ring reachable from records without making them non-Sendable.
struct SharedRingHandle: Sendable {
    let ring: SharedRing
}
