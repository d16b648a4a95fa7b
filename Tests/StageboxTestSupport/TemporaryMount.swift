import CLinux

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A tmpfs mounted on a fresh directory: a medium of its own for a test (a stick for the
/// mirror, a disk that fills). Nil where this process may not mount (not root): the test says
/// it did not run.
public final class TemporaryMount {
    public let path: String

    public init?(sizeKB: Int) {
        guard geteuid() == 0 else { return nil }
        var template = Array("/tmp/stagebox-medium-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        path = String(cString: made)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(sizeKB)k") == 0 else {
            rmdir(path)
            return nil
        }
    }

    /// Mounts it again read-only or writable (as the card's BOOT is kept read-only).
    public func remount(readOnly: Bool) -> Bool {
        mount("tmpfs", path, "tmpfs", UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0), nil) == 0
    }

    public var isReadOnly: Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    public func remove() {
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }
}
