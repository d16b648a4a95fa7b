import Logging
import StageboxCodec
import StageboxRealtime

/// Turns what the audio thread reported into log lines, off the audio thread.
struct EventLog {
    let logger: Logger
    let control: DriverControl
    var onEvent: (@Sendable (AudioEvent) -> Void)?

    func drain() {
        while let event = control.events.pop() {
            onEvent?(event)
            let ms = fixed(Double(event.durationNanos) / 1_000_000, digits: 1)
            logger.warning("\(event.kind.rawValue) (\(ms) ms)")
        }
    }
}
