import Logging
import StageboxDrivers
import StageboxLogging
import StageboxSystem

/// Turns what the audio thread reported into log lines, off the audio thread. A kind that
/// repeats is told five times in ten seconds, then summarised (`RepeatSummarizer`); the
/// console's `xruns` still lists every one.
final class EventLog {
    let logger: Logger
    let control: DriverControl
    /// What the board was like (health, the recorder's ring): told with every xrun.
    let context: () -> String
    let onEvent: (@Sendable (AudioEvent, String?) -> Void)?
    private var repeats = RepeatSummarizer(windowSeconds: 10)

    init(logger: Logger, control: DriverControl, context: @escaping () -> String = { "" },
         onEvent: (@Sendable (AudioEvent, String?) -> Void)?) {
        self.logger = logger
        self.control = control
        self.context = context
        self.onEvent = onEvent
    }

    /// Control thread only. Returns how many events there were.
    @discardableResult
    func drain() -> Int {
        let now = monotonicNanoseconds()
        var count = 0
        while let event = control.events.pop() {
            count += 1
            let isXrun = event.kind == .captureXrun || event.kind == .playbackXrun
            let context = isXrun ? self.context() : nil
            onEvent?(event, context)
            if let line = repeats.note(event.kind.rawValue, durationNanos: event.durationNanos, now: now) {
                let told = context.map { $0.isEmpty ? "" : " at \($0)" } ?? ""
                logger.warning("\(line)\(told)")
            }
        }
        let due = repeats.due(now: now)
        for line in due { logger.warning("\(line)") }
        return count + due.count
    }

    /// At the end of a run: what is still untold.
    func finish() {
        drain()
        for line in repeats.flushAll(now: monotonicNanoseconds()) { logger.warning("\(line)") }
    }
}
