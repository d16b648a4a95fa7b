/// How long takes can go on before a medium is down to its reserve (`min_free_mb`), at the
/// recorder's format for the sources on the bus: what field recorders show as "time left".
public struct RecordTimeLeft: Sendable, Equatable {
    public var seconds: Double

    /// Below this the recorder warns: a log line once a take, and the record trigger (its LED)
    /// in its alternate state.
    public static let warningSeconds: Double = 600

    public init(seconds: Double) { self.seconds = seconds }

    /// Nil when nothing would be recorded (no source on the bus): there is no time to tell.
    public init?(freeBytes: UInt64, reserveBytes: UInt64, bytesPerSecond: Int) {
        guard bytesPerSecond > 0 else { return nil }
        let usable = freeBytes > reserveBytes ? freeBytes - reserveBytes : 0
        seconds = Double(usable) / Double(bytesPerSecond)
    }

    public var isLow: Bool { seconds < Self.warningSeconds }

    /// "63 h 10 min", "47 min", "9 min 58 s", "40 s": hours and minutes while there is time,
    /// seconds once it counts.
    public var text: String {
        let whole = Int(seconds.rounded(.down))
        let hours = whole / 3600, minutes = whole % 3600 / 60, rest = whole % 60
        if hours > 0 { return "\(hours) h \(minutes) min" }
        if whole >= 3600 / 6 { return "\(minutes) min" }
        if minutes > 0 { return "\(minutes) min \(rest) s" }
        return "\(rest) s"
    }
}
