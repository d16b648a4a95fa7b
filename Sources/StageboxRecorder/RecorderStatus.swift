/// What the recorder is doing, for the console, the record trigger and the logs.
public enum RecorderState: Sendable, Equatable {
    case idle
    case recording
    /// The last take ended or was refused for this reason (a full disk, a missing directory);
    /// the record trigger shows an error until the next take starts.
    case failed(String)
}

/// The take being recorded.
public struct RunningTake: Sendable, Equatable {
    /// `2026-11-22_1412_0003`: what the take's files start with.
    public var name: String
    public var files: [String]
    public var frames: Int64
    public var bytes: UInt64
    public var seconds: Double
    public var droppedFrames: Int
    public var markers: Int
}

/// A take that ended, or that the start-up pass found in the directory.
public struct TakeSummary: Sendable, Equatable {
    public var file: String
    public var frames: Int64
    public var seconds: Double
    public var bytes: UInt64
    /// What the start-up pass or the end of the take had to say: "repaired: …", "disk full".
    public var note: String?
}

public struct RecorderStatus: Sendable, Equatable {
    public var state: RecorderState = .idle
    public var take: RunningTake?
    public var freeBytes: UInt64?
    /// From asking for a take to the codec time of its first sample, for the last take (ms;
    /// negative with pre-roll).
    public var startLatencyMs: Double?
}

/// Why `record start` did nothing.
public struct RecorderRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
