import DequeModule
import StageboxSystem
import Synchronization

/// The health thread: reads the board's health every `intervalNanos` (a second: a change is
/// told within two), keeps the latest reading for `status`, the console and the xruns' context,
/// and tells each change to `onChange` (the log). A thread of its own at normal priority: it
/// opens files, which the audio thread never does.
public final class HealthMonitor: Sendable {
    public struct Change: Sendable, Equatable {
        /// Monotonic nanoseconds.
        public var time: Int64
        public var line: String
    }

    private struct State {
        var reader: HealthReader
        var changes: HealthChanges
        var latest: HealthReading?
        var history = Deque<Change>()
        var readings = 0
    }

    public let intervalNanos: Int64
    /// How many changes `history` keeps.
    public static let historyLength = 64
    private let state: Mutex<State>
    private let onChange: @Sendable (String) -> Void
    private let loop: ServiceLoop

    public init(files: SystemFiles, warnTemperature: Double, intervalNanos: Int64 = 1_000_000_000,
                clockSynchronized: @escaping @Sendable () -> Bool? = { nil },
                onChange: @escaping @Sendable (String) -> Void) throws(SystemCallError) {
        self.intervalNanos = intervalNanos
        self.onChange = onChange
        state = Mutex(State(reader: HealthReader(files: files, clockSynchronized: clockSynchronized), changes: HealthChanges(warnTemperature: warnTemperature)))
        loop = try ServiceLoop(named: "health")
    }

    /// Starts the thread; its first reading is at once.
    public func start() throws(SystemCallError) {
        try loop.start { [self] _ in
            readOnce()
            return .init(deadline: monotonicNanoseconds() + intervalNanos)
        }
    }

    public func stop() { loop.stop() }

    /// The latest reading (nil before the first).
    public var latest: HealthReading? { state.withLock { $0.latest } }

    /// The changes told so far, oldest first (the last `historyLength`).
    public var history: [Change] { state.withLock { Array($0.history) } }

    /// How many readings were taken (for the thread's cost figure).
    public var readings: Int { state.withLock { $0.readings } }

    /// One reading, its changes told; the thread's turn (tests call it directly).
    public func readOnce() {
        let now = monotonicNanoseconds()
        // Read outside the lock: the console must never wait on a slow sysfs file.
        var reader = state.withLock { $0.reader }
        let reading = reader.read(now: now)
        let lines = state.withLock { s in
            s.reader = reader
            s.readings += 1
            let lines = s.changes.lines(from: s.latest, to: reading)
            s.latest = reading
            for line in lines {
                s.history.append(Change(time: now, line: line))
                if s.history.count > Self.historyLength { s.history.removeFirst() }
            }
            return lines
        }
        for line in lines { onChange(line) }
    }
}
