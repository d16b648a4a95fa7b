import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a stick's partition holds, and its check before it is mounted: util-linux's blkid
/// and each filesystem's own checker (dosfstools, exfatprogs, e2fsprogs), run as children.
public struct StickFilesystem: Sendable, Equatable {
    /// blkid's name: "vfat", "exfat", "ext4", …
    public var type: String
    public var label: String?

    /// The filesystems a stick may bring: what field recorders write, and Linux's own.
    public static let mountable: Set<String> = ["vfat", "exfat", "ext4", "ext3", "ext2"]

    /// How a check ended: the stick is mounted read-write unless it is `.damaged`.
    public enum Check: Sendable, Equatable {
        case clean
        case repaired(String)
        /// Errors the checker could not mend: mounted read-only, for copying off what is there.
        case damaged(String)
        /// No checker for this filesystem on the system: mounted as it is.
        case notChecked(String)
    }

    public init(type: String, label: String?) {
        self.type = type
        self.label = label
    }

    /// Reads `device` (a /dev path) with `blkid -p`: straight from the device, not a cache.
    public static func probe(_ device: String, probeSeconds: Double = StickFilesystem.probeSeconds) -> Result<StickFilesystem, StickRefusal> {
        guard let blkid = SystemTool.find("blkid") else { return .failure(StickRefusal("blkid is missing: cannot tell what \(device) holds")) }
        let outcome: ChildProcess.Outcome
        do { outcome = try ChildProcess.run(blkid, ["-p", "-o", "export", device], timeoutSeconds: probeSeconds) } catch {
            return .failure(StickRefusal("\(error)"))
        }
        if outcome.timedOut { return .failure(StickRefusal("blkid \(device) did not answer within \(Int(probeSeconds)) s (a stick that does not read?)")) }
        return parse(outcome, device: device)
    }

    static func parse(_ outcome: ChildProcess.Outcome, device: String) -> Result<StickFilesystem, StickRefusal> {
        var values: [String: String] = [:]
        for line in outcome.lines {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard outcome.status == 0, let type = values["TYPE"] else {
            // blkid says 2 when it found nothing it knows
            return .failure(StickRefusal(outcome.status == 2 || outcome.status == 0
                ? "\(device) holds no filesystem (not formatted, or a kind blkid does not know)"
                : "blkid \(device) failed (status \(outcome.status)): \(outcome.lines.last ?? "")"))
        }
        guard mountable.contains(type) else {
            return .failure(StickRefusal("\(device) holds \(type): sticks can be FAT32, exFAT or ext4"))
        }
        let label = values["LABEL"].flatMap { $0.isEmpty ? nil : $0 }
        return .success(StickFilesystem(type: type, label: label))
    }

    /// How long blkid may take to read a stick, and a check to go through it: past that the
    /// stick is not mounted, or mounted read-only (the media thread must get back to its events).
    public static let probeSeconds = 15.0
    public static let checkSeconds = 120.0

    /// Checks `device` and mends what can be mended without asking (a stick pulled mid-write
    /// leaves FAT's dirty flag set, or an ext4 journal to replay).
    public func check(_ device: String) -> Check {
        let (name, arguments, repairedStatuses): (String, [String], Set<Int32>) = switch type {
        case "vfat": ("fsck.fat", ["-a", "-w", device], [1])
        case "exfat": ("fsck.exfat", ["-p", device], [1])
        default: ("e2fsck", ["-p", device], [1, 2])
        }
        guard let tool = SystemTool.find(name) else { return .notChecked("no \(name) on this system: not checked") }
        let outcome: ChildProcess.Outcome
        do { outcome = try ChildProcess.run(tool, arguments, timeoutSeconds: Self.checkSeconds) } catch { return .notChecked("\(error)") }
        let said = outcome.lines.filter { !$0.isEmpty }.suffix(2).joined(separator: " / ")
        if outcome.timedOut { return .damaged("\(name) did not finish within \(Int(Self.checkSeconds)) s") }
        if outcome.status == 0 { return .clean }
        guard repairedStatuses.contains(outcome.status) else {
            return .damaged("\(name) could not mend it (status \(outcome.status)): \(said)")
        }
        // dosfstools says 1 both for "errors found (and mended)" and for a failure of its own:
        // a second, read-only pass must find the filesystem clean.
        if type == "vfat" {
            let again = try? ChildProcess.run(tool, ["-n", device], timeoutSeconds: Self.checkSeconds)
            guard let again, again.status == 0, !again.timedOut else {
                return .damaged("\(name) could not mend it: \(said)")
            }
        }
        return .repaired("\(name) mended it: \(said)")
    }

    /// The kernel's name of the filesystem: ext2 and ext3 mount with ext4's driver.
    var kernelType: String { type.hasPrefix("ext") ? "ext4" : type }
}

/// Why a stick is not mounted, or cannot be ejected.
public struct StickRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A program of the system's, found where Debian and BusyBox put them (the firmware does not
/// rely on PATH: an init script may give it none).
enum SystemTool {
    static let folders = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]

    static func find(_ name: String) -> String? {
        folders.lazy.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }
}
