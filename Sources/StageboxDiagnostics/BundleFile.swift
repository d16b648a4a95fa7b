import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes a support bundle into a folder, as `stagebox-support-YYYYMMDD-HHMMSS.txt`. The
/// card's BOOT partition is mounted read-only (a power cut finds it clean): a folder on a
/// read-only mount is made writable for the write and read-only again after, under the same
/// lock directory as the card's scripts (`/run/boot-writable.lock`), so fw_setenv and an
/// update's rename never meet it half-way.
public enum BundleFile {
    public static let lockDirectory = "/run/boot-writable.lock"

    /// Where a bundle goes unless told: the configuration file's folder (BOOT on the card),
    /// "." for a bare file name, /tmp with no file (the built-in defaults).
    public static func defaultFolder(configFile: String?) -> String {
        guard let path = configFile else { return "/tmp" }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// The file's name for a local time.
    public static func name(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "stagebox-support-\(year)\(two(month))\(two(day))-\(two(hour))\(two(minute))\(two(second)).txt"
    }

    /// The name for now (local time).
    public static func nameNow() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return name(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                    hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// Writes `text` into `directory`; returns the file's path.
    public static func write(_ text: String, into directory: String, name: String = nameNow()) throws(SystemCallError) -> String {
        // One at a time in this process (the serial console and the bus each run commands), so
        // that two in the same second pick two names.
        try writing.withLock { _ throws(SystemCallError) -> String in
            var info = statvfs()
            guard statvfs(directory, &info) == 0 else { throw .last("looking at", directory) }
            guard info.f_flag & UInt(ST_RDONLY) != 0 else {
                let path = unusedPath(directory + "/" + name)
                try WholeFile.write(text, to: path)
                return path
            }
            // Read-only: writable for the moment of the write, under the card's lock.
            let locked = takeLock()
            defer { if locked { rmdir(lockDirectory) } }
            guard mount("", directory, "", UInt(MS_REMOUNT), nil) == 0 else {
                throw .last("making the read-only mount writable at", directory)
            }
            defer { _ = mount("", directory, "", UInt(MS_REMOUNT) | UInt(MS_RDONLY), nil) }
            let path = unusedPath(directory + "/" + name)
            try WholeFile.write(text, to: path)
            return path
        }
    }

    private static let writing = Mutex(())

    /// `path`, or with -2, -3, … before its extension when a file has that name: two bundles
    /// made in the same second are two files.
    static func unusedPath(_ path: String) -> String {
        guard access(path, F_OK) == 0 else { return path }
        let dot = path.lastIndex(of: ".").flatMap { path[$0...].contains("/") ? nil : $0 } ?? path.endIndex
        for n in 2... {
            let candidate = String(path[..<dot]) + "-\(n)" + String(path[dot...])
            if access(candidate, F_OK) != 0 { return candidate }
        }
        return path
    }

    /// The lock directory, waited for up to 3 s (then the write goes ahead, as the scripts do).
    private static func takeLock() -> Bool {
        for _ in 0..<30 {
            if mkdir(lockDirectory, 0o700) == 0 { return true }
            if errno != EEXIST { return false }
            usleep(100_000)
        }
        return false
    }
}
