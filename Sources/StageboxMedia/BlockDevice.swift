import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A block device as sysfs describes it, enough to tell a USB stick's filesystem from the
/// card's own partitions.
public struct BlockDevice: Sendable, Equatable {
    /// Its name under /dev ("sda1").
    public var name: String
    public var isPartition: Bool
    /// Behind a USB port (its sysfs path runs through the USB bus): a stick or a card reader.
    public var onUSB: Bool
    public var sizeBytes: UInt64
    /// A whole disk with a partition table: its partitions hold the filesystems, not it.
    public var hasPartitions: Bool

    public init(name: String, isPartition: Bool, onUSB: Bool, sizeBytes: UInt64, hasPartitions: Bool) {
        self.name = name
        self.isPartition = isPartition
        self.onUSB = onUSB
        self.sizeBytes = sizeBytes
        self.hasPartitions = hasPartitions
    }

    /// `name` as sysfs (under `sysfs`, "/sys" but for tests) has it; nil when it is gone.
    public init?(name: String, sysfs: String = "/sys") {
        let link = sysfs + "/class/block/" + name
        guard let resolved = Self.realPath(link) else { return nil }
        self.name = name
        isPartition = access(link + "/partition", F_OK) == 0
        onUSB = resolved.contains("/usb")
        let sectors = Self.firstLine(link + "/size").flatMap { UInt64($0) } ?? 0
        sizeBytes = sectors.multipliedReportingOverflow(by: 512).partialValue
        hasPartitions = !isPartition && Folder.names(in: link).contains { access(link + "/" + $0 + "/partition", F_OK) == 0 }
    }

    /// A filesystem a stick may hold: a USB partition, or a USB disk formatted whole.
    public var mayHoldStick: Bool { onUSB && sizeBytes > 0 && (isPartition || !hasPartitions) }

    /// Every block device sysfs lists now.
    public static func all(sysfs: String = "/sys") -> [BlockDevice] {
        Folder.names(in: sysfs + "/class/block").compactMap { BlockDevice(name: $0, sysfs: sysfs) }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func firstLine(_ path: String) -> String? {
        (try? WholeFile.read(path, limit: 64))?.split(separator: "\n").first.map { String($0).filter { $0 != " " } }
    }
}
