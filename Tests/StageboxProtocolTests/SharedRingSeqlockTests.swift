import Atomics
import Foundation
import StageboxProtocol
import Testing

/// The ring header's consistent reads under a writer that never pauses: every value a reader
/// accepts is one the writer wrote whole. On a weakly ordered CPU (a Pi's Cortex-A53/A72) a
/// missing barrier in a seqlock shows here as a torn value; x86_64 and qemu-user on x86_64
/// order memory strongly and cannot show it, so these guard the code on real boards.
@Suite struct SharedRingSeqlockTests {
    /// Runs `write` on another thread until `read` has been called `reads` times and `enough`
    /// holds (or 60 s have passed). With `yielding`, the writer yields between writes and
    /// sleeps after every fourth: a reader of a long value (the names table) would otherwise
    /// find it mid-write at every try and give up. Under qemu-user on a loaded machine even the
    /// yields left no gap in 20,000 reads (CI, aarch64), so the reads go on until one is whole.
    func race(
        reads: Int, yielding: Bool = false, until enough: () -> Bool = { true },
        write: @escaping @Sendable (Int64) -> Void, read: () -> Void
    ) {
        let stop = ManagedAtomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        Thread {
            var n: Int64 = 1
            while !stop.load(ordering: .relaxed) {
                write(n)
                if n == 1 { started.signal() }
                n &+= 1
                if yielding { if n % 4 == 0 { usleep(20) } else { sched_yield() } }
            }
            done.signal()
        }.start()
        // The reads begin once something is written: on a loaded machine the writer's thread
        // may start after all of them would have been done.
        started.wait()
        for _ in 0..<reads { read() }
        let deadline = Date().addingTimeInterval(60)
        while !enough() && Date() < deadline {
            for _ in 0..<1_000 { read() }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
    }

    @Test func theCodecClockIsNeverReadTorn() throws {
        let ring = try SharedRing.create(name: "seqlock-clock", channels: 1, capacity: 256)
        var consistent = 0, torn = 0
        race(reads: 300_000, write: { ring.setClock(codecFrame: $0, hostNanos: $0 &* 3) }) {
            guard let (frame, nanos) = ring.clock(), frame > 0 else { return }
            if nanos == frame &* 3 { consistent += 1 } else { torn += 1 }
        }
        #expect(torn == 0)
        #expect(consistent > 0)
    }

    @Test func sourceNamesAreNeverReadHalfChanged() throws {
        let ring = try SharedRing.create(name: "seqlock-names", channels: 2, capacity: 256)
        let tables = [["a.left", "a.right", "a.third"], ["bb.one", "bb.two"]]
        var seen = Set<[String]>(), mixed = 0
        race(reads: 20_000, yielding: true, until: { !seen.isEmpty }, write: { ring.setSourceNames(tables[Int($0 % 2)]) }) {
            let names = ring.sourceNames().filter { !$0.isEmpty }
            if names.isEmpty { return }
            if tables.contains(names) { seen.insert(names) } else { mixed += 1 }
        }
        #expect(mixed == 0)
        #expect(!seen.isEmpty)
    }

    @Test func aTimestampIsNeverReadWhileItsSlotIsRewritten() throws {
        let ring = try SharedRing.create(name: "seqlock-stamps", channels: 1, capacity: 64)
        var consistent = 0, torn = 0
        let sample: [Float] = [0]
        race(reads: 300_000, write: { n in
            sample.withUnsafeBufferPointer {
                ring.write($0.baseAddress!, frames: 1, timestamp: .init(ringPosition: 0, codecFrame: n, hostNanos: n &* 7))
            }
        }) {
            guard let t = ring.timestamp(atOrBefore: UInt64.max) else { return }
            if t.hostNanos == t.codecFrame &* 7 { consistent += 1 } else { torn += 1 }
        }
        #expect(torn == 0)
        #expect(consistent > 0)
    }
}
