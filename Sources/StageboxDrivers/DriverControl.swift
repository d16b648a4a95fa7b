import StageboxRealtime
import StageboxSystem
import Synchronization

/// Something the audio thread noticed, reported to the rest of Stagebox through a queue.
public struct AudioEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case captureXrun = "capture xrun"
        case playbackXrun = "playback xrun"
        case lateWakeup = "late wakeup"
        case pollTimeout = "poll timeout"
        case suspended = "suspended"
        case restart = "restart"
    }

    public var kind: Kind
    /// Monotonic time of the event, in nanoseconds.
    public var timeNanos: Int64
    /// How long the interruption lasted (the gap, or the time recovery took), in nanoseconds.
    public var durationNanos: Int64

    public init(kind: Kind, timeNanos: Int64, durationNanos: Int64) {
        self.kind = kind
        self.timeNanos = timeNanos
        self.durationNanos = durationNanos
    }
}

/// Shared between a driver's audio thread and whoever runs the driver: a stop request,
/// an optional frame budget, the statistics and the event queue.
public final class DriverControl: Sendable {
    public let statistics = AudioStatistics()
    /// Events from the audio thread; drained by a control thread.
    /// 1024: an idle control thread drains it once a second, and a storm at 64 frames brings
    /// up to 750 events a second.
    public let events = SPSCQueue<AudioEvent>(capacity: 1024)
    private let stopFlag = Atomic<Bool>(false)
    /// Frames processed since start.
    public let framesProcessed = Atomic<Int>(0)
    /// Stop after this many frames (0 = run until stopped).
    public let frameLimit: Int

    /// Wakes the control thread before its next tick is due: a request, a change it must act
    /// on. Nil where no eventfd could be had: the control thread then just ticks.
    public let wakeup: Wakeup?

    public init(frameLimit: Int = 0) {
        self.frameLimit = frameLimit
        wakeup = try? Wakeup(purpose: "the control thread")
    }

    /// Ticks the control thread now (from any thread but the audio thread).
    public func wakeControl() { wakeup?.signal() }

    private let restartFlag = Atomic<Bool>(false)

    /// Asks the audio thread to restart the codec as it does after an xrun (drop both streams,
    /// pre-fill, start them together); reported as a `restart` event, not counted as an xrun.
    public func requestRestart() { restartFlag.store(true, ordering: .relaxed) }

    /// Audio side: whether a restart was asked for (and takes the request).
    @inline(__always)
    func takeRestartRequest() -> Bool {
        restartFlag.load(ordering: .relaxed) && restartFlag.exchange(false, ordering: .relaxed)
    }

    /// Asks the audio thread to stop after the period it is processing.
    public func requestStop() {
        stopFlag.store(true, ordering: .relaxed)
        wakeControl()
    }

    public var stopRequested: Bool { stopFlag.load(ordering: .relaxed) }

    private let pauseFlag = Atomic<Bool>(false)
    private let pauseCount = Atomic<Int>(0)

    /// Asks the supervisor to pause: the audio thread ends its loop after the period it is
    /// processing, the device is closed, and nothing runs until `resume`.
    public func requestPause() {
        pauseCount.wrappingAdd(1, ordering: .relaxed)
        pauseFlag.store(true, ordering: .relaxed)
        wakeControl()
    }

    /// How many pauses were asked for so far: a loop that ended while one was asked for ended
    /// for it, even if a resume came before the supervisor looked (the flag is clear again then).
    public var pausesRequested: Int { pauseCount.load(ordering: .relaxed) }

    /// Ends a pause: the supervisor reopens the device and starts the streams again.
    public func requestResume() {
        pauseFlag.store(false, ordering: .relaxed)
        wakeControl()
    }

    public var pauseRequested: Bool { pauseFlag.load(ordering: .relaxed) }

    /// Whether the frame limit (`--frames`) is reached.
    public var frameLimitReached: Bool {
        frameLimit > 0 && framesProcessed.load(ordering: .relaxed) >= frameLimit
    }

    /// Where the driver is, as its supervisor moved it.
    public let state = Atomic<DriverState>(.stopped)
    /// When the first period after the last start of the streams was processed (monotonic
    /// nanoseconds): how long a start or resume took.
    public let firstPeriodAt = Atomic<Int64>(0)
    /// While `waitingForDevice`: when the next try is, in monotonic nanoseconds.
    public let retryAt = Atomic<Int64>(0)

    /// Audio side: whether the loop should end now.
    @inline(__always)
    func shouldStop() -> Bool {
        stopFlag.load(ordering: .relaxed) || pauseFlag.load(ordering: .relaxed) || frameLimitReached
    }

    /// Audio side: reports an event; dropped if nobody drains the queue.
    @inline(__always)
    func report(_ kind: AudioEvent.Kind, at time: Int64, duration: Int64) {
        events.push(AudioEvent(kind: kind, timeNanos: time, durationNanos: duration))
    }
}
