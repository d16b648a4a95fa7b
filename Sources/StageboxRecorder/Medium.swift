import CLinux

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A filesystem takes can be written to, as `statfs` sees it: its kind, size and free space.
public struct Medium: Sendable, Equatable {
    /// Where it was asked about: a directory on it.
    public var path: String
    /// "ext4", "vfat", "exfat", …; "0x…" for a kind this table does not name.
    public var filesystem: String
    public var sizeBytes: UInt64
    /// Free for an unprivileged writer (ext4 keeps a reserve for root).
    public var freeBytes: UInt64

    /// The medium holding `path`, or nil when it cannot be asked (no such directory).
    public init?(path: String) {
        var fs = statfs()
        guard statfs(path, &fs) == 0 else { return nil }
        self.path = path
        filesystem = Self.name(ofMagic: UInt64(truncatingIfNeeded: Int64(fs.f_type)))
        let block = UInt64(fs.f_frsize > 0 ? fs.f_frsize : fs.f_bsize)
        sizeBytes = UInt64(fs.f_blocks).multipliedReportingOverflow(by: block).partialValue
        freeBytes = UInt64(fs.f_bavail).multipliedReportingOverflow(by: block).partialValue
    }

    public init(path: String, filesystem: String, sizeBytes: UInt64, freeBytes: UInt64) {
        self.path = path
        self.filesystem = filesystem
        self.sizeBytes = sizeBytes
        self.freeBytes = freeBytes
    }

    /// The kinds a recorder meets (linux/magic.h); the magic is 32 bits.
    static func name(ofMagic magic: UInt64) -> String {
        switch magic & 0xffff_ffff {
        case 0xEF53: "ext4"
        case 0x4d44: "vfat"
        case 0x2011_BAB0: "exfat"
        case 0x5346_544e: "ntfs"
        case 0x0102_1994: "tmpfs"
        case 0x9123_683E: "btrfs"
        case 0x5846_5342: "xfs"
        case 0x794c_7630: "overlay"
        case 0x6969: "nfs"
        default: "0x" + String(magic & 0xffff_ffff, radix: 16)
        }
    }
}
