import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The state document on disk: read at start, written atomically (a temporary file beside it,
/// fsync, rename over the old one, fsync of the directory), so that a power cut at any moment
/// leaves the old state or the new one, never neither, never a mix.
public struct StateFile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public enum Loaded: Sendable, Equatable {
        case missing
        case loaded(SavedState)
        /// Unreadable: set aside under `setAside` (nil when even renaming failed).
        case corrupt(problem: String, setAside: String?)
    }

    /// Reads the state; a corrupt or unreadable file is renamed to PATH.corrupt-SECONDS so the
    /// next write does not bury it, and the caller runs on the configuration.
    public func load(now seconds: Int) -> Loaded {
        let text: String
        do {
            text = try read()
        } catch {
            if error.errno == .noSuchFileOrDirectory { return .missing }
            return .corrupt(problem: error.description, setAside: setAside(seconds))
        }
        do {
            return .loaded(try SavedState.parse(text))
        } catch {
            return .corrupt(problem: error.description, setAside: setAside(seconds))
        }
    }

    private func read() throws(SystemCallError) -> String {
        let fd = try SystemCallError.naming("opening", path) { try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try SystemCallError.naming("reading", path) { try chunk.withUnsafeMutableBytes { try fd.read(into: $0) } }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > 1 << 20 { throw SystemCallError("reading", path, errno: .fileTooLarge) }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SystemCallError("reading", path, errno: .illegalByteSequence)
        }
        return text
    }

    private func setAside(_ seconds: Int) -> String? {
        let aside = "\(path).corrupt-\(seconds)"
        return rename(path, aside) == 0 ? aside : nil
    }

    /// Writes `state` atomically (see the type).
    public func write(_ state: SavedState) throws(SystemCallError) {
        let temporary = path + ".new"
        let fd = try SystemCallError.naming("creating", temporary) {
            try FileDescriptor.open(FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                    permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        do throws(SystemCallError) {
            _ = try SystemCallError.naming("writing", temporary) { try fd.writeAll(Array(state.text.utf8)) }
            if fsync(fd.rawValue) != 0 { throw SystemCallError.last("fsync", temporary) }
        } catch {
            try? fd.close()
            throw error
        }
        try? fd.close()
        if rename(temporary, path) != 0 { throw .last("renaming \(temporary) to", path) }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let dfd = try SystemCallError.naming("opening the directory", directory) {
            try FileDescriptor.open(FilePath(directory), .readOnly, options: [.directory, .closeOnExec])
        }
        defer { try? dfd.close() }
        if fsync(dfd.rawValue) != 0 { throw .last("fsync on the directory", directory) }
    }
}
