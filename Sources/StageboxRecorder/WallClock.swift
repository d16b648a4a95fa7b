#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The local date and time a take's name and `bext` chunk carry.
struct WallClock {
    var year, month, day, hour, minute, second: Int
    var secondsSinceMidnight: Double

    /// Now, less `seconds` (a take's pre-roll began before the press).
    static func now(minusSeconds seconds: Double) -> WallClock {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let t = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 - seconds
        var clock = time_t(t.rounded(.down))
        var local = tm()
        localtime_r(&clock, &local)
        let hour = Int(local.tm_hour), minute = Int(local.tm_min), second = Int(local.tm_sec)
        let whole = Double(hour * 3600 + minute * 60 + second)
        let fraction: Double = t - t.rounded(.down)
        return WallClock(year: Int(local.tm_year) + 1900, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday),
                         hour: hour, minute: minute, second: second, secondsSinceMidnight: whole + fraction)
    }

    var date: String { "\(year)-\(pad(month))-\(pad(day))" }
    var time: String { "\(pad(hour)):\(pad(minute)):\(pad(second))" }
    private func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
