import StageboxProtocol
import SystemPackage
import Testing
import StageboxSystem
import StageboxTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A deterministic generator (xorshift64*), so that a failing run can be repeated exactly.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}

/// The values a hostile or broken client likes to write: the extremes, off-by-ones around the
/// honest values, and noise.
func adversarialWord(_ rng: inout SeededGenerator, near honest: UInt64) -> UInt64 {
    switch rng.next() % 10 {
    case 0: return 0
    case 1: return UInt64.max
    case 2: return UInt64(Int64.max)
    case 3: return UInt64(Int64.max) &+ 1
    case 4: return honest &+ 1
    case 5: return honest &- 1
    case 6: return honest &+ (rng.next() % 100_000)
    case 7: return honest &- (rng.next() % 100_000)
    case 8: return Double.nan.bitPattern
    default: return rng.next()
    }
}

/// The header's words a client can write, by offset (see RingLayout).
let headerWords = [64, 128, 192, 200, 208, 216, 224, 232, 240, 256, 264, 272, 1000, 1792, 1800, 1808, 1816, 1824, 0, 4, 8]

@Suite struct SharedRingAdversaryTests {
    /// The server's view and a client's view of one ring; the client's mapping is raw memory.
    struct Pair {
        let server: SharedRing
        let client: SharedRing
        let raw: UnsafeMutableRawPointer
        let size: Int

        init(channels: Int = 2, capacity: Int = 1024) throws {
            server = try SharedRing.create(name: "adversary", channels: channels, capacity: capacity)
            client = try SharedRing.map(OwnedDescriptor(try server.fileDescriptor.duplicate()))
            size = SharedRing.byteSize(channels: channels, capacity: capacity)
            raw = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, server.fileDescriptor.rawValue, 0)!
        }

        func poke(_ offset: Int, _ value: UInt64) { raw.storeBytes(of: value, toByteOffset: offset, as: UInt64.self) }
        func peek(_ offset: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        func release() { munmap(raw, size) }
    }

    /// The server consumes a client's sender ring and produces into a receiver ring while the
    /// client writes adversarial values over every header word and the data, 200 000 times from a
    /// fixed seed (a tenth of that under qemu-user). Nothing traps, no call loops without end,
    /// everything read back is in range, and every impossible position is reported as a fault
    /// rather than used.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func theServerSurvivesAnythingTheClientWrites(seed: UInt64) throws {
        var rng = SeededGenerator(state: 0x9E37_79B9_7F4A_7C15 &* seed)
        var faults = 0
        var pair = try Pair()
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 1024)
        defer { block.deallocate() }
        block.update(repeating: 0.25, count: 2 * 1024)
        for step in 0..<Emulation.scaled(25_000) {
            // The client: an honest write most of the time, a poke some of the time.
            if rng.next() % 4 == 0 {
                let offset = headerWords[Int(rng.next() % UInt64(headerWords.count))]
                pair.poke(offset, adversarialWord(&rng, near: pair.peek(offset)))
            } else {
                pair.client.write(block, frames: Int(rng.next() % 300))
            }
            if rng.next() % 16 == 0 {
                // Data: NaN, infinities and huge values are the client's business; they must not trap.
                let i = Int(rng.next() % UInt64(2 * 1024))
                pair.raw.storeBytes(of: UInt32(truncatingIfNeeded: rng.next()), toByteOffset: 4096 + 4 * i, as: UInt32.self)
            }
            // The server, as the audio thread uses the ring.
            let frames = 1 + Int(rng.next() % 128)
            _ = pair.server.read(into: block, frames: frames)
            _ = pair.server.availableChecked
            _ = pair.server.producerEnded
            // Checked together, recorded only when wrong: a million #expects cost a minute under qemu.
            let s = pair.server
            let ratioSane = s.ratio.map { $0.isFinite && $0 > 0 && $0 < 1000 } ?? true
            if !((0...s.capacity / 2).contains(s.startThreshold) && (0...s.capacity).contains(s.available)
                && (0...s.capacity).contains(s.targetFill) && s.underruns >= 0 && s.overruns >= 0 && ratioSane) {
                let what: String = "start threshold \(s.startThreshold), available \(s.available), "
                    + "target fill \(s.targetFill) of \(s.capacity), underruns \(s.underruns), overruns \(s.overruns), "
                    + "ratio \(String(describing: s.ratio))"
                Issue.record("step \(step): out of range: \(what)")
            }
            _ = pair.server.timestamp(atOrBefore: UInt64(step))
            _ = pair.server.sourceNames()
            _ = pair.server.clock()
            if pair.server.fault != nil {
                faults += 1
                // A faulted ring moves nothing from then on.
                #expect(!pair.server.read(into: block, frames: 1))
                #expect(pair.server.availableChecked == 0)
                pair.release()
                pair = try Pair()
            }
        }
        pair.release()
        #expect(faults > 10, "the adversary broke the positions \(faults) times; each must be seen")
    }

    /// The same from the other direction: the server produces (a receiver's ring) and the
    /// client moves the read position wherever it likes.
    @Test(arguments: [11, 12, 13, 14])
    func theServerProducesSafelyWhateverTheClientReadPositionSays(seed: UInt64) throws {
        var rng = SeededGenerator(state: 0xD1B5_4A32_D192_ED03 &* seed)
        var pair = try Pair()
        var faults = 0
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 1024)
        defer { block.deallocate() }
        block.update(repeating: -0.5, count: 2 * 1024)
        for _ in 0..<Emulation.scaled(25_000) {
            switch rng.next() % 4 {
            case 0: pair.poke(128, adversarialWord(&rng, near: pair.peek(128)))
            case 1: pair.poke(64, adversarialWord(&rng, near: pair.peek(64)))
            case 2: pair.poke(240, adversarialWord(&rng, near: pair.peek(240))) // the wake threshold
            default: _ = pair.client.read(into: block, frames: 1 + Int(rng.next() % 200))
            }
            pair.server.write(block, frames: 64, timestamp: .init(ringPosition: 0, codecFrame: 1, hostNanos: 2))
            _ = pair.server.consumerWantsWakeup
            pair.server.setClock(codecFrame: 5, hostNanos: 6)
            pair.server.setSourceNames(["a.out", "b.out"])
            if pair.server.fault != nil {
                faults += 1
                pair.release()
                pair = try Pair()
            }
        }
        pair.release()
        #expect(faults > 10)
    }

    /// Honest use finds no fault: a producer overrunning the consumer, wrapping around, both
    /// sides reading and writing blocks of every size.
    @Test func honestUseIsNeverAFault() throws {
        let pair = try Pair(channels: 1, capacity: 256)
        defer { pair.release() }
        var rng = SeededGenerator(state: 42)
        var next: Float = 0, expected: Float = 0
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
        defer { block.deallocate() }
        for _ in 0..<Emulation.scaled(50_000) {
            let n = Int(rng.next() % 300)
            for i in 0..<n { block[i] = next; next += 1 }
            pair.client.write(block, frames: n)
            let m = 1 + Int(rng.next() % 200)
            if pair.server.read(into: block, frames: m) {
                // Frames come in order; dropped ones (overruns) leave a jump forwards, never back.
                // One check per read, not per frame: 5 million #expects took minutes under qemu.
                #expect(block[0] >= expected)
                if let i = (1..<m).first(where: { block[$0] != block[$0 - 1] + 1 }) {
                    Issue.record("frame \(i) of a read of \(m) is \(block[i]) after \(block[i - 1])")
                }
                expected = block[m - 1] + 1
            }
            if pair.server.fault != nil || pair.client.fault != nil {
                Issue.record("honest use faulted: server \(String(describing: pair.server.fault)), client \(String(describing: pair.client.fault))")
            }
        }
    }

    /// The codec clock and the source names are read consistently, and a table that never
    /// settles reads as empty rather than hanging the reader.
    @Test func seqlocksAreBounded() throws {
        let pair = try Pair()
        defer { pair.release() }
        pair.server.setClock(codecFrame: 4800, hostNanos: 123)
        #expect(pair.client.clock()! == (4800, 123))
        pair.server.setSourceNames(["x.out", "y.out"])
        #expect(pair.client.sourceNames().prefix(2) == ["x.out", "y.out"])
        pair.poke(232, 1) // odd: "being written", forever
        #expect(pair.client.sourceNames() == Array(repeating: "", count: 8))
        pair.poke(1792, 3)
        #expect(pair.client.clock() == nil)
        pair.poke(232, 2)
        pair.raw.storeBytes(of: 0xFF, toByteOffset: 2048, as: UInt8.self) // not a name byte
        #expect(pair.client.sourceNames()[0] == "")
    }
}
