import Foundation
@testable import StageboxRealtime
import StageboxSystem
import Testing

@Suite struct MemoryLockTests {
    /// The code mappings read from /proc/self/maps hold this very function, and no writable memory.
    @Test func theCodeMappingsHoldTheRunningCode() throws {
        let ranges = try MemoryLock.codeMappings()
        let here = unsafeBitCast(MemoryLockTests.marker as @convention(c) () -> Void, to: UInt.self)
        #expect(ranges.contains { $0.contains(here) }, "\(ranges.count) ranges, none holding \(String(here, radix: 16))")
        var onTheHeap = [UInt8](repeating: 0, count: 16)
        let heap = onTheHeap.withUnsafeMutableBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(!ranges.contains { $0.contains(heap) })
    }

    static let marker: @convention(c) () -> Void = {}

    /// What counts as code in a maps text: executable file mappings (execute-only too, and a
    /// path with spaces or one since deleted), the program's read-only data; not anonymous,
    /// special or writable mappings, nor another file's read-only data.
    @Test func theMapsParserTakesCodeAndTheProgramsReadOnlyData() {
        let maps = """
            00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/stagebox
            00652000-00653000 r--p 00052000 08:02 173521      /usr/bin/stagebox
            00653000-00654000 rw-p 00053000 08:02 173521      /usr/bin/stagebox
            01000000-01021000 rw-p 00000000 00:00 0           [heap]
            7f0000000000-7f0000010000 r-xp 00000000 08:02 42   /opt/my libs/libx.so
            7f0000010000-7f0000020000 r--p 00010000 08:02 42   /opt/my libs/libx.so
            7f0000020000-7f0000030000 --xp 00000000 08:02 43   /usr/lib/libexeconly.so
            7f0000030000-7f0000040000 r-xp 00000000 08:02 44   /usr/lib/libgone.so (deleted)
            7f0000040000-7f0000041000 rw-p 00000000 00:00 0
            7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0    [vdso]
            ffff-1 r-xp 00000000 08:02 45 /broken
            """
        let ranges = MemoryLock.codeMappings(maps: maps, program: "/usr/bin/stagebox")
        #expect(ranges == [0x400000..<0x452000, 0x652000..<0x653000, 0x7f0000000000..<0x7f0000010000,
                           0x7f0000020000..<0x7f0000030000, 0x7f0000030000..<0x7f0000040000])
    }

    @Test func theSummarySaysWhatWasLocked() {
        let locked = MemoryLock(error: 0, onFault: true, codeBytes: 17_511_219, codeError: 0)
        #expect(locked.summary == "memory locked: 16.7 MiB of code whole, the rest as it is first touched")
        #expect(MemoryLock(error: EPERM, onFault: false, codeBytes: 0, codeError: 0).summary.hasPrefix("memory not locked (errno 1)"))
        #expect(MemoryLock(error: 0, onFault: true, codeBytes: 1 << 20, codeError: ENOMEM).summary
            .hasSuffix("; some code could not be locked (errno 12)"))
        #expect(MemoryLock(error: 0, onFault: true, codeBytes: 0, codeError: ENOENT).summary
            .hasSuffix("; no code mappings were found in /proc/self/maps"))
    }

    /// Pages touched by `Prefault.touch` are resident at once: mincore sees them in memory.
    @Test func prefaultTouchesEveryPage() throws {
        let pages = 32
        let memory = mmap(nil, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
        defer { munmap(memory, pages * 4096) }
        Prefault.touch(memory.assumingMemoryBound(to: Float.self), count: pages * 1024)
        var resident = [UInt8](repeating: 0, count: pages)
        #expect(mincore(memory, pages * 4096, &resident) == 0)
        #expect(resident.allSatisfy { $0 & 1 == 1 }, "\(resident)")
    }

    /// `Prefault.populate` maps shared memory in without changing it: what another process
    /// wrote there stays, and every page is resident.
    @Test func populateMapsSharedMemoryInUnchanged() throws {
        let pages = 16, size = 16 * 4096
        let writer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)!
        defer { munmap(writer, size) }
        for page in 0..<pages { writer.storeBytes(of: UInt8(page + 1), toByteOffset: page * 4096 + 7, as: UInt8.self) }
        Prefault.populate(UnsafeRawPointer(writer) + 100, bytes: size - 200) // not page-aligned
        var resident = [UInt8](repeating: 0, count: pages)
        #expect(mincore(writer, size, &resident) == 0)
        #expect(resident.allSatisfy { $0 & 1 == 1 }, "\(resident)")
        #expect((0..<pages).allSatisfy { writer.load(fromByteOffset: $0 * 4096 + 7, as: UInt8.self) == UInt8($0 + 1) })
    }
}
