import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The wall clock's last known time, kept in a small file (as Debian's fake-hwclock keeps
/// one): a board with no battery-backed clock wakes up in 1970, or wherever its clock stopped,
/// and the file says how far it had got.
public enum SavedTime {
    /// The time the file holds, in seconds since the epoch; nil when it is missing or not one.
    public static func read(_ path: String) -> Int64? {
        guard let text = try? WholeFile.read(path, limit: 256) else { return nil }
        // "1795878346 2026-11-26T14:05:46Z": the seconds, then the same for people.
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Writes `seconds` (a power cut leaves the old file or the new one).
    public static func write(_ seconds: Int64, to path: String) throws(SystemCallError) {
        try WholeFile.write("\(seconds) \(utc(seconds))\n", to: path)
    }

    /// The newest modification time among `paths` and the files directly inside them: a take
    /// written up to the moment of a power cut is later than the last save of the time.
    public static func newestModification(in paths: [String]) -> Int64? {
        var newest: Int64?
        for path in paths {
            let names = Folder.names(in: path).map { path + "/" + $0 }
            for candidate in [path] + names {
                var st = stat()
                guard stat(candidate, &st) == 0 else { continue }
                newest = max(newest ?? 0, Int64(st.st_mtim.tv_sec))
            }
        }
        return newest
    }

    /// `2026-11-26T14:05:46Z`.
    public static func utc(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
