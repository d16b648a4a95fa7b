import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Small files read and written whole: the saved state, the take counter, the updater's notes.
///
/// A write leaves, after a power cut at any moment, the old file or the new one, never neither
/// and never a mix: the text goes to PATH.new, is synced, is renamed over PATH, and the
/// directory is synced so that the rename itself is on the disk.
public enum WholeFile {
    /// Writes `text` to `path` (see the type), mode 0644.
    public static func write(_ text: String, to path: String) throws(SystemCallError) {
        let temporary = path + ".new"
        let fd = try SystemCallError.naming("creating", temporary) {
            try FileDescriptor.open(FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                    permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        do throws(SystemCallError) {
            _ = try SystemCallError.naming("writing", temporary) { try fd.writeAll(Array(text.utf8)) }
            if fsync(fd.rawValue) != 0 { throw SystemCallError.last("fsync", temporary) }
        } catch {
            try? fd.close()
            unlink(temporary)
            throw error
        }
        try? fd.close()
        if rename(temporary, path) != 0 {
            let failed = SystemCallError.last("renaming \(temporary) to", path)
            unlink(temporary)
            throw failed
        }
        try syncDirectory(of: path)
    }

    /// Syncs the directory that holds `path`, so that a file created or renamed there survives
    /// a power cut.
    public static func syncDirectory(of path: String) throws(SystemCallError) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let dfd = try SystemCallError.naming("opening the directory", directory) {
            try FileDescriptor.open(FilePath(directory), .readOnly, options: [.directory, .closeOnExec])
        }
        defer { try? dfd.close() }
        if fsync(dfd.rawValue) != 0 { throw .last("fsync on the directory", directory) }
    }

    /// The file's text; a file past `limit` bytes fails with EFBIG, one that is not UTF-8
    /// with EILSEQ.
    public static func read(_ path: String, limit: Int = 1 << 20) throws(SystemCallError) -> String {
        let fd = try SystemCallError.naming("opening", path) { try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try SystemCallError.naming("reading", path) { try chunk.withUnsafeMutableBytes { try fd.read(into: $0) } }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > limit { throw SystemCallError("reading", path, errno: .fileTooLarge) }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SystemCallError("reading", path, errno: .illegalByteSequence)
        }
        return text
    }
}
