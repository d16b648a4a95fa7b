import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the kernel's files are read from: `/sys` and `/proc`, or folders laid out as they are
/// (`STAGEBOX_SYSFS_ROOT`, `STAGEBOX_PROCFS_ROOT`), so tests feed recorded trees of a real Pi.
public struct SystemFiles: Sendable, Equatable {
    public var sysfs: String
    public var procfs: String

    public init(sysfs: String = "/sys", procfs: String = "/proc") {
        self.sysfs = sysfs
        self.procfs = procfs
    }

    /// A small file under `/sys` as one trimmed line, or nil when it is missing or unreadable.
    func sys(_ path: String) -> String? { Self.line(sysfs + "/" + path) }

    /// Whether a file under `/sys` is there (`access`: no open).
    func sysExists(_ path: String) -> Bool { access(sysfs + "/" + path, F_OK) == 0 }

    /// The start of a small file under `/proc` (up to 1 KiB: a `stat` line is about 300
    /// bytes), or nil. One open, one read, one close: the busiest process is a file per process.
    func proc(_ path: String) -> String? {
        procBytes(path) { String(decoding: $0, as: UTF8.self) } ?? nil
    }

    /// `body` on the start of a small file under `/proc` (up to 1 KiB), as bytes that live
    /// until it returns; nil when the file is missing or empty. Parsing the bytes where they
    /// lie spares a string a file: the process scan reads one a process.
    func procBytes<T>(_ path: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        let fd = open(procfs + "/" + path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer in
            let n = read(fd, buffer.baseAddress, buffer.count)
            return n > 0 ? body(UnsafeBufferPointer(rebasing: buffer[0..<n])) : nil
        }
    }

    /// The names in a folder under `/sys`, sorted, or none.
    func sysNames(in path: String) -> [String] { Folder.names(in: sysfs + "/" + path) }

    /// The names in a folder under `/proc`, sorted, or none.
    func procNames(in path: String) -> [String] { Folder.names(in: procfs + "/" + path) }

    static func line(_ path: String) -> String? {
        (try? WholeFile.read(path, limit: 4096))?.trimmedLine
    }
}

extension String {
    /// Without the blanks and line ends a sysfs file has around its value.
    var trimmedLine: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" || $0 == "\0" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
