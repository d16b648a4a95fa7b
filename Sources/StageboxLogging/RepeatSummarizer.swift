/// Keeps a warning that repeats (late wakeups on a busy machine, a codec that xruns all the
/// time) from flooding the log: the first `burst` of a kind in a window are told one by one;
/// the ones after them are counted and told in one summary line once the window has passed.
public struct RepeatSummarizer {
    public let windowNanos: Int64
    public let burst: Int
    private struct Kind {
        var windowStart: Int64
        var told = 1
        var count = 0
        var longestNanos: Int64 = 0
    }
    private var kinds: [String: Kind] = [:]

    public init(windowSeconds: Double = 10, burst: Int = 5) {
        windowNanos = Int64(windowSeconds * 1e9)
        self.burst = max(1, burst)
    }

    /// One occurrence of `kind`; returns the line to log now, if any.
    public mutating func note(_ kind: String, durationNanos: Int64, now: Int64) -> String? {
        let line = "\(kind) (\(Self.ms(durationNanos)) ms)"
        if var k = kinds[kind], now - k.windowStart < windowNanos {
            if k.told < burst {
                k.told += 1
                kinds[kind] = k
                return line
            }
            k.count += 1
            k.longestNanos = max(k.longestNanos, durationNanos)
            kinds[kind] = k
            return nil
        }
        let summary = flush(kind, now: now)
        kinds[kind] = Kind(windowStart: now)
        return summary.map { "\($0); \(line)" } ?? line
    }

    /// Summaries of everything still untold, whatever the time (at the end of a run).
    public mutating func flushAll(now: Int64) -> [String] {
        kinds.keys.sorted().compactMap { flush($0, now: now) }
    }

    /// Summaries of the kinds whose window has passed with occurrences untold.
    public mutating func due(now: Int64) -> [String] {
        kinds.keys.sorted().compactMap { kind in
            guard let k = kinds[kind], k.count > 0, now - k.windowStart >= windowNanos else { return nil }
            return flush(kind, now: now)
        }
    }

    private mutating func flush(_ kind: String, now: Int64) -> String? {
        guard let k = kinds[kind], k.count > 0 else { return nil }
        kinds[kind] = Kind(windowStart: now, told: burst)
        let seconds = Double(windowNanos) / 1e9
        return "\(kind): \(k.count) more in \(Self.format(seconds)) s (longest \(Self.ms(k.longestNanos)) ms)"
    }

    private static func ms(_ nanos: Int64) -> String { format(Double(nanos) / 1e6) }

    private static func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
