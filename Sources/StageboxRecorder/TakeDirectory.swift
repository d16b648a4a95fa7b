import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The directory where takes go: their names, the sequence number that never repeats (kept in
/// `.sequence`, written atomically), and the free space.
public struct TakeDirectory: Sendable {
    public let path: String
    static let sequenceFile = ".sequence"

    public init(path: String) { self.path = path }

    /// Makes the directory when only its last component is missing and its parent is not the
    /// root (a top-level directory such as `/data` is a mount point: made on the root
    /// filesystem it would take the takes meant for the card). True when it made it.
    @discardableResult
    public func makeIfMissing() -> Bool {
        var st = stat()
        guard stat(path, &st) != 0, Errno.last == .noSuchFileOrDirectory else { return false }
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return false }
        let parent = String(path[..<slash])
        guard stat(parent, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return false }
        return mkdir(path, 0o755) == 0
    }

    /// Why takes cannot go here now (missing, not a directory, read-only), or nil.
    public func problem() -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return "\(path): \(Errno.last)" }
        guard st.st_mode & S_IFMT == S_IFDIR else { return "\(path) is not a directory" }
        guard access(path, W_OK) == 0 else { return "\(path) is not writable: \(Errno.last)" }
        var vfs = statvfs()
        if statvfs(path, &vfs) == 0 && vfs.f_flag & UInt(ST_RDONLY) != 0 { return "\(path) is on a read-only filesystem" }
        return nil
    }

    /// Free bytes for an unprivileged writer, or nil when the filesystem cannot be asked.
    public func freeBytes() -> UInt64? {
        var vfs = statvfs()
        guard statvfs(path, &vfs) == 0 else { return nil }
        let (bytes, overflow) = UInt64(vfs.f_bavail).multipliedReportingOverflow(by: UInt64(vfs.f_frsize))
        return overflow ? .max : bytes
    }

    /// Takes the next sequence number: one above both the stored one and any in a file name,
    /// stored durably before it is used, so a number is never given twice, across reboots too.
    public func nextSequence() throws(SystemCallError) -> Int {
        let stored = readSequence() ?? 0
        let named = Self.wavFiles(in: path).compactMap(TakeName.sequence(of:)).max() ?? 0
        let next = max(stored, named) + 1
        try WholeFile.write("\(next)\n", to: path + "/" + Self.sequenceFile)
        return next
    }

    private func readSequence() -> Int? {
        guard let fd = try? FileDescriptor.open(FilePath(path + "/" + Self.sequenceFile), .readOnly) else { return nil }
        defer { try? fd.close() }
        var buffer = [UInt8](repeating: 0, count: 32)
        guard let n = try? buffer.withUnsafeMutableBytes({ try fd.read(into: $0) }) else { return nil }
        return TakeName.number(String(decoding: buffer[0..<n], as: UTF8.self).filter(\.isNumber))
    }

    /// The `.wav` files in `directory` (not hidden), sorted by name.
    public static func wavFiles(in directory: String) -> [String] {
        Folder.names(in: directory).filter { !$0.hasPrefix(".") && $0.hasSuffix(".wav") }
    }
}

/// A take's file name: `2026-11-22_1412_0003_codec.in.wav`, local date and time of the start,
/// the sequence number, the source port.
public enum TakeName {
    public static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, sequence: Int, source: String) -> String {
        "\(year)-\(two(month))-\(two(day))_\(two(hour))\(two(minute))_\(pad(sequence, 4))_\(source).wav"
    }

    /// The sequence number in a take's name, or nil for another file.
    public static func sequence(of name: String) -> Int? {
        let parts = name.split(separator: "_", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].count == 10, parts[1].count == 4 else { return nil }
        return number(parts[2])
    }

    /// A sequence number as written: 1 to 9 digits (a longer one, from a file someone named,
    /// is not Stagebox's and must not push the count to overflow).
    static func number(_ text: some StringProtocol) -> Int? {
        guard (1...9).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static func two(_ n: Int) -> String { pad(n, 2) }
    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
