import StageboxProtocol

/// Decides the conversion ratio of one port: the nominal ratio of the two sample rates, and,
/// once a drift of the program's clock against the codec's has been measured, the measured
/// ratio, with a small bounded pull of the ring's fill towards its defined target.
///
/// Three rules keep it from ever winding up or engaging for nothing:
/// - the drift is measured open loop (`ClockDriftEstimator`): the program's own frame count
///   against the codec clock the server stamps into the ring, never the fill level;
/// - a program that waits on the bus (`waitForSpace`, `waitForData`) is paced by the bus and has
///   no drift of its own: while it does, the ratio stays nominal (and at equal rates the converter
///   never engages, so the samples pass bit for bit, for any length);
/// - the pull towards the target is bounded (±`pullLimit`), with no integral: gentle near the
///   target (it would close the gap in `pullSeconds`), firm beyond `nearFrames` of it (the part
///   beyond closes in a second), so that a fill a late detection left low is restored quickly
///   while the ratio stays within a few parts per million of the measured one once it is.
struct DriftController {
    enum Direction { case toBus, fromBus }

    let direction: Direction
    /// Output frames per input frame at nominal clocks (the adapter's).
    let nominalRatio: Double
    let busRate: Double
    let period: Int
    static let pullLimit = 0.005
    static let pullSeconds = 5.0
    static let nearSeconds = 0.004
    private var estimator: ClockDriftEstimator
    private var clientFrames = 0.0
    private var firstObservation: Int64 = 0
    private var smoothedFill: Double?
    private var lastBusWait: Int64 = .min / 2
    /// The measured client frames (bus units) per codec frame, once significant.
    private(set) var measured: Double?

    init(direction: Direction, nominalRatio: Double, busRate: Int, period: Int) {
        self.direction = direction
        self.nominalRatio = nominalRatio
        self.busRate = Double(busRate)
        self.period = max(1, period)
        // Eighth-second buckets; a step of more than 20 ms of audio off the line restarts.
        estimator = ClockDriftEstimator(bucketFrames: Double(busRate) / 8, stepFrames: Double(busRate) / 50)
    }

    /// The program waited on the bus for room or data: it is paced by the bus.
    mutating func noteBusWait(at now: Int64) { lastBusWait = now }

    /// Whether the program waited on the bus within the second before `now`.
    func pacedByBus(at now: Int64) -> Bool { now - lastBusWait < 1_000_000_000 }

    /// Bus frames per program frame of `frames` program frames.
    private func busUnits(_ frames: Int) -> Double {
        direction == .toBus ? Double(frames) * nominalRatio : Double(frames) / nominalRatio
    }

    /// One call of the program: `frames` program frames sent or taken at `now`, with the ring's
    /// `fill` (after a write, before a read), its defined `target`, and the ring's codec clock.
    /// Returns the ratio to convert with, or nil to stay as the adapter is (no drift measured).
    mutating func observe(now: Int64, frames: Int, fill: Int, target: Int,
                          clock: (codecFrame: Int64, hostNanos: Int64)?) -> Double? {
        clientFrames += busUnits(frames)
        let f = Double(fill)
        smoothedFill = smoothedFill.map { $0 + (f - $0) * 0.05 } ?? f
        guard let clock else { return nil }
        if firstObservation == 0 { firstObservation = now }
        // The codec's position now: its last period's start, plus what has played since (at most
        // a few periods: the stamp is renewed every period).
        let since = Double(now &- clock.hostNanos) * busRate / 1e9
        let codecNow = Double(clock.codecFrame) + max(0, min(since, Double(4 * period)))
        // Skip the first tenth of a second: a program's start is rarely its steady pace.
        if now - firstObservation > 100_000_000 { estimator.observe(codec: codecNow, client: clientFrames) }

        if pacedByBus(at: now) { return nominalRatio }
        // Engage only on a drift measured over a second at least, and clearly not noise.
        guard let e = estimator.estimate, estimator.span >= busRate else { return nil }
        if measured == nil && abs(e.slope - 1) <= max(4 * e.standardError, 0.00002) { return nil }
        measured = e.slope
        let error = (smoothedFill ?? f) - Double(target)
        let near = Self.nearSeconds * busRate
        let beyond = error > 0 ? max(0, error - near) : min(0, error + near)
        let pull = 1 - max(-Self.pullLimit, min(Self.pullLimit, error / (Self.pullSeconds * busRate) + beyond / busRate))
        return direction == .toBus ? nominalRatio / e.slope * pull : nominalRatio * e.slope * pull
    }
}
