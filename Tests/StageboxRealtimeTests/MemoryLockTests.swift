import Foundation
@testable import StageboxRealtime
import Testing

@Suite struct MemoryLockTests {
    /// The code mappings read from /proc/self/maps hold this very function, and no writable memory.
    @Test func theCodeMappingsHoldTheRunningCode() throws {
        let ranges = MemoryLock.codeMappings()
        let here = unsafeBitCast(MemoryLockTests.marker as @convention(c) () -> Void, to: UInt.self)
        #expect(ranges.contains { $0.contains(here) }, "\(ranges.count) ranges, none holding \(String(here, radix: 16))")
        var onTheHeap = [UInt8](repeating: 0, count: 16)
        let heap = onTheHeap.withUnsafeMutableBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(!ranges.contains { $0.contains(heap) })
    }

    @Test func theSummarySaysWhatWasLocked() {
        let locked = MemoryLock(error: 0, onFault: true, codeBytes: 17_511_219, codeError: 0)
        #expect(locked.summary == "memory locked: 16.7 MiB of code whole, the rest as it is first touched")
        #expect(MemoryLock(error: EPERM, onFault: false, codeBytes: 0, codeError: 0).summary.hasPrefix("memory not locked (errno 1)"))
        #expect(MemoryLock(error: 0, onFault: true, codeBytes: 1 << 20, codeError: ENOMEM).summary
            .hasSuffix("; some code could not be locked (errno 12)"))
    }

    static let marker: @convention(c) () -> Void = {}

    /// Pages touched by `Prefault` are resident at once: mincore sees them in memory.
    @Test func prefaultTouchesEveryPage() throws {
        let pages = 32
        let memory = mmap(nil, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
        defer { munmap(memory, pages * 4096) }
        Prefault.touch(memory.assumingMemoryBound(to: Float.self), count: pages * 1024)
        var resident = [UInt8](repeating: 0, count: pages)
        #expect(mincore(memory, pages * 4096, &resident) == 0)
        #expect(resident.allSatisfy { $0 & 1 == 1 }, "\(resident)")
    }
}
