import CLinux
import StageboxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the process's memory was locked, so that the audio thread never waits on a page.
///
/// All code is locked whole: a rarely taken path on the audio thread (an xrun's recovery) must
/// not fault its page in from the SD card. Everything else (data, heap, stacks, rings) is locked
/// as it is first touched (`MCL_ONFAULT`): a thread's 512 KiB stack or a static buffer nobody
/// uses would otherwise be resident for good, and a Pi Zero 2 W has 512 MB. What the audio
/// thread touches is touched before it runs: its stack (`RealtimeThread`), its buffers and
/// queues where they are made, the client rings and the codec's buffer when mapped (`Prefault`).
public struct MemoryLock: Sendable, Equatable {
    /// errno of `mlockall`; 0 when the memory is locked.
    public let error: Int32
    /// Whether untouched pages wait for their first touch (false: a kernel before 4.4, where
    /// everything is locked whole, as `MCL_CURRENT | MCL_FUTURE` alone does).
    public let onFault: Bool
    /// Bytes of code (every executable file mapping, and the program's read-only data) locked whole.
    public let codeBytes: Int
    /// errno of the first code mapping that could not be locked (RLIMIT_MEMLOCK, say), of reading
    /// /proc/self/maps, or ENOENT when it named no code; 0 when all code was locked.
    public let codeError: Int32

    /// Locks the process's memory as described above. Not being allowed to is not fatal:
    /// the result says so, and the caller logs it.
    public static func lock() -> MemoryLock {
        let onFault: Int32 = 4 // MCL_ONFAULT (Linux 4.4), not in every libc's headers
        var error: Int32 = 0
        var lazily = true
        if mlockall(Int32(MCL_CURRENT | MCL_FUTURE) | onFault) != 0 {
            error = errno
            if error == EINVAL {
                lazily = false
                error = mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0 ? 0 : errno
            }
        }
        guard error == 0 else { return MemoryLock(error: error, onFault: false, codeBytes: 0, codeError: 0) }
        guard lazily else { return MemoryLock(error: 0, onFault: false, codeBytes: 0, codeError: 0) }
        var bytes = 0, codeError: Int32 = 0
        let ranges: [Range<UInt>]
        do throws(SystemCallError) {
            ranges = try codeMappings()
        } catch {
            ranges = []
            codeError = error.errno.rawValue
        }
        if ranges.isEmpty && codeError == 0 { codeError = ENOENT }
        for range in ranges {
            // mlock faults the whole range in and keeps it.
            if mlock(UnsafeRawPointer(bitPattern: range.lowerBound), range.count) == 0 {
                bytes += range.count
            } else if codeError == 0 {
                codeError = errno
            }
        }
        return MemoryLock(error: 0, onFault: true, codeBytes: bytes, codeError: codeError)
    }

    /// The address ranges of every executable file mapping, and of the program's own read-only
    /// ones, from /proc/self/maps.
    static func codeMappings() throws(SystemCallError) -> [Range<UInt>] {
        let maps = try WholeFile.read("/proc/self/maps", limit: 8 << 20)
        var link = [UInt8](repeating: 0, count: 4096)
        let length = link.withUnsafeMutableBufferPointer { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
        let program = length > 0 ? String(decoding: link[0..<length], as: UTF8.self) : ""
        return codeMappings(maps: maps, program: program)
    }

    /// The code ranges of a maps text ("start-end perms offset dev inode path" a line): file
    /// mappings that may be executed (`r-xp`, or execute-only `--xp`), and `program`'s read-only ones.
    static func codeMappings(maps: String, program: String) -> [Range<UInt>] {
        var ranges: [Range<UInt>] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { continue }
            let path = fields[5].drop { $0 == " " }
            guard path.first == "/" else { continue } // [heap], [stack], [vdso], anonymous
            let perms = Array(fields[1].utf8)
            guard perms.count >= 3 else { continue }
            let executable = perms[2] == UInt8(ascii: "x")
            let programsReadOnly = perms[0] == UInt8(ascii: "r") && perms[1] == UInt8(ascii: "-") && path == program
            guard executable || programsReadOnly else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                  start < end else { continue }
            ranges.append(start..<end)
        }
        return ranges
    }

    /// What to tell the log, one line.
    public var summary: String {
        if error != 0 { return "memory not locked (errno \(error)): the audio thread may page-fault under memory pressure" }
        guard onFault else { return "memory locked whole (this kernel has no MCL_ONFAULT)" }
        let tenths = (codeBytes * 10 + (1 << 19)) >> 20 // rounded
        let refused = codeError == ENOENT && codeBytes == 0 ? "; no code mappings were found in /proc/self/maps"
            : codeError == 0 ? "" : "; some code could not be locked (errno \(codeError))"
        return "memory locked: \(tenths / 10).\(tenths % 10) MiB of code whole, the rest as it is first touched\(refused)"
    }
}
