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
    let onEvent: (@Sendable (AudioEvent) -> Void)?
    private var repeats = RepeatSummarizer(windowSeconds: 10)

    init(logger: Logger, control: DriverControl, onEvent: (@Sendable (AudioEvent) -> Void)?) {
        self.logger = logger
        self.control = control
        self.onEvent = onEvent
    }

    /// Control thread only.
    func drain() {
        let now = monotonicNanoseconds()
        while let event = control.events.pop() {
            onEvent?(event)
            if let line = repeats.note(event.kind.rawValue, durationNanos: event.durationNanos, now: now) {
                logger.warning("\(line)")
            }
        }
        for line in repeats.due(now: now) { logger.warning("\(line)") }
    }

    /// At the end of a run: what is still untold.
    func finish() {
        drain()
        for line in repeats.flushAll(now: monotonicNanoseconds()) { logger.warning("\(line)") }
    }
}
