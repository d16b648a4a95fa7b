import CLinux
import Foundation

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

/// A FAT32 filesystem of its own, in an image file on a loop device, as a USB stick is
/// formatted; nil where that cannot be made (not root, no mkfs.fat, no loop devices, no vfat).
public final class TemporaryFATMount {
    public let path: String
    private let image: String

    public init?(sizeMB: Int = 40) {
        guard geteuid() == 0 else { return nil }
        var template = Array("/tmp/stagebox-fat-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        path = String(cString: made)
        image = path + ".img"
        // FAT32 needs 65525 clusters: 40 MB of 512-byte ones.
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(sizeMB) << 20) == 0,
              Self.run("/usr/sbin/mkfs.fat", ["-F", "32", "-s", "1", "-n", "STICK", image]),
              Self.run("/usr/bin/mount", ["-t", "vfat", "-o", "loop", image, path]) else {
            rmdir(path)
            unlink(image)
            return nil
        }
    }

    public func remove() {
        _ = Self.run("/usr/bin/umount", [path])
        rmdir(path)
        unlink(image)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
