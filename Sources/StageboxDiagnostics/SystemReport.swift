import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the system says of itself, for a support bundle: the kernel, the board, the OS, the
/// ALSA cards, the kernel log's tail. Each part says in words why it is missing.
public enum SystemReport {
    /// The kernel (`/proc/version`), the board's model (the device tree's), the OS
    /// (`/etc/os-release`'s PRETTY_NAME), the uptime.
    public static func versions() -> [String] {
        var lines: [String] = []
        lines.append("kernel      " + (small("/proc/version") ?? "(no /proc/version)"))
        if let model = small("/proc/device-tree/model") { lines.append("board       " + model) }
        let os = small("/etc/os-release", limit: 8192)?.split(separator: "\n")
            .first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst("PRETTY_NAME=".count)).filter { $0 != "\"" } }
        lines.append("os          " + (os ?? "(no PRETTY_NAME in /etc/os-release)"))
        if let up = small("/proc/uptime")?.split(separator: " ").first.flatMap({ Double($0) }) {
            lines.append("uptime      \(Int(up) / 3600) h \(Int(up) / 60 % 60) min \(Int(up) % 60) s")
        }
        return lines
    }

    /// `/proc/asound/cards`, as `aplay -l` would show the cards.
    public static func alsaCards() -> [String] {
        guard let text = small("/proc/asound/cards", limit: 65536) else { return ["(no /proc/asound/cards: no ALSA in this kernel)"] }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return lines.last == "" ? Array(lines.dropLast()) : lines
    }

    /// The last `count` lines of the kernel's log (`/dev/kmsg`, read without waiting), as
    /// `dmesg` prints them: `[seconds] message`.
    public static func kernelLog(last count: Int) -> [String] {
        let fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return ["(the kernel log cannot be read: \(String(cString: strerror(errno))))"] }
        defer { close(fd) }
        var lines: [String] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EPIPE { continue } // records overwritten while reading: go on with the next
                break // EAGAIN: the end
            }
            if n == 0 { break }
            if let line = formatRecord(String(decoding: buffer[0..<n], as: UTF8.self)) {
                lines.append(line)
                if lines.count > count { lines.removeFirst(lines.count - count) }
            }
        }
        return lines
    }

    /// One `/dev/kmsg` record ("6,339,5140900,-;text\n SUBSYSTEM=…") as `[    5.140900] text`.
    static func formatRecord(_ record: String) -> String? {
        guard let semicolon = record.firstIndex(of: ";") else { return nil }
        let fields = record[..<semicolon].split(separator: ",")
        guard fields.count >= 3, let micros = Int(fields[2]) else { return nil }
        let message = record[record.index(after: semicolon)...].prefix { $0 != "\n" }
        let seconds = String(micros / 1_000_000), fraction = String(micros % 1_000_000)
        let padded = String(repeating: " ", count: max(0, 5 - seconds.count)) + seconds
        return "[\(padded).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)] \(message)"
    }

    static func small(_ path: String, limit: Int = 4096) -> String? {
        guard let text = try? WholeFile.read(path, limit: limit) else { return nil }
        // The device tree's strings end in NUL.
        let trimmed = text.split(separator: "\0").first.map(String.init) ?? text
        return trimmed.hasSuffix("\n") ? String(trimmed.dropLast()) : trimmed
    }
}
