import Logging
import StageboxFormatting
import StageboxRealtime
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the log says at start about how the audio thread is scheduled: said at once, because a
/// board whose real-time priority was refused glitches under load and its owner should know why
/// before the first xrun, not when the program ends.
public enum SchedulingReport {
    public static func line(_ outcome: RealtimeOutcome, periodFrames: Int, sampleRate: Int) -> (Logger.Level, String) {
        let period = fixed(Double(periodFrames) * 1000 / Double(max(1, sampleRate)), digits: 2)
        let risk = "any busy program on the board can delay a period past its \(period) ms deadline and cause an xrun"
        switch outcome {
        case let .fifo(priority, asked) where priority == asked:
            return (.info, "audio thread: SCHED_FIFO priority \(priority)")
        case let .fifo(priority, asked):
            return (.notice, "audio thread: SCHED_FIFO priority \(priority) (rt_priority asks \(asked); "
                    + "RLIMIT_RTPRIO allows at most \(priority))")
        case let .normal(nice):
            return (.notice, "audio thread: normal scheduling, nice \(nice) (rt_priority = 0): \(risk); "
                    + "set rt_priority (1–99) where the system grants it")
        case let .refused(priority, code, limit, nice):
            return (.warning, "audio thread: SCHED_FIFO priority \(priority) refused (\(Errno(rawValue: code)); "
                    + "RLIMIT_RTPRIO is \(limit)), so it runs without real-time scheduling, at normal "
                    + "scheduling with nice \(nice): \(risk). Run stagebox as root, give it CAP_SYS_NICE, "
                    + "or raise its real-time priority limit (ulimit -r \(priority), LimitRTPRIO=\(priority) "
                    + "in its systemd unit, or rtprio in /etc/security/limits.conf)")
        }
    }
}
