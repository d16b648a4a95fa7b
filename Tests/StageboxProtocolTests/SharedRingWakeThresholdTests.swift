import StageboxProtocol
import StageboxSystem
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A consumer that waits for more than a period asks to be woken once it has come: the producer
/// (the audio thread) then wakes it every few periods instead of every one.
@Suite struct SharedRingWakeThresholdTests {
    let server: SharedRing
    let client: SharedRing
    let tone = [Float](repeating: 0.5, count: 2 * 1024)

    init() throws {
        server = try SharedRing.create(name: "wake", channels: 2, capacity: 1024)
        client = try SharedRing.map(OwnedDescriptor(try server.fileDescriptor.duplicate()))
    }

    /// The consumer takes `frames` frames.
    private func take(_ frames: Int) -> Bool {
        var out = [Float](repeating: 0, count: 2 * frames)
        return out.withUnsafeMutableBufferPointer { client.read(into: $0.baseAddress!, frames: frames) }
    }

    /// Which of `periods` writes of 64 frames would wake the consumer.
    private func wakes(over periods: Int) -> [Int] {
        (0..<periods).filter { _ in
            tone.withUnsafeBufferPointer { server.write($0.baseAddress!, frames: 64) }
            return server.consumerWantsWakeup
        }
    }

    @Test func withoutAThresholdEveryWriteWakes() {
        #expect(wakes(over: 6) == [0, 1, 2, 3, 4, 5])
    }

    @Test func aConsumerWaitingForFivePeriodsIsWokenOnceTheyAreThere() {
        client.setWakeThreshold(5 * 64)
        #expect(wakes(over: 5) == [4])
        // It takes everything; the next wakeup comes five periods later again.
        #expect(take(5 * 64))
        #expect(wakes(over: 10) == [4, 5, 6, 7, 8, 9], "until it reads, each period past the threshold wakes")
        #expect(take(10 * 64))
        client.setWakeThreshold(0)
        #expect(wakes(over: 2) == [0, 1], "done waiting: every period again")
    }

    /// The two sides at once, as the audio thread and a client run them: a producer writing a
    /// block every 100 µs and signalling when the consumer wants it, a consumer that asks for 1
    /// to 8 blocks and sleeps until they are there, 2,000 times, with a wait of up to 2 s. A
    /// wakeup lost between the consumer's check and its sleep leaves it asleep the whole 2 s
    /// (the client library's own wait gives up after 50 ms, which would hide it).
    @Test func aConsumerThatSleepsIsNeverLeftAsleep() throws {
        let (producerEnd, consumerEnd) = try Wakeup.pair(purpose: "the test's producer")
        let consumerWake = Wakeup(adopting: try #require(consumerEnd.take()))
        final class Flag: Sendable { let raised = Atomic<Bool>(false) }
        let stop = Flag()
        let ring = server
        let producer = try PosixThread.start(named: "producer") {
            let block = [Float](repeating: 0.25, count: 2 * 64)
            while !stop.raised.load(ordering: .relaxed) {
                block.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: 64) }
                if ring.consumerWantsWakeup { producerEnd.signal() }
                usleep(100)
            }
        }.get()
        var rng = SeededGenerator(state: 0x5EED)
        var slept = 0, timedOut = 0
        var out = [Float](repeating: 0, count: 2 * 1024)
        for _ in 0..<2000 {
            let want = 64 * (1 + Int(rng.next() % 8))
            client.setWakeThreshold(want)
            while client.available < want {
                if consumerWake.wait(timeoutNanos: 2_000_000_000) { slept += 1 } else { timedOut += 1 }
            }
            client.setWakeThreshold(0)
            if timedOut > 0 { break } // one is enough, and each costs 2 s
            let n = client.available
            _ = out.withUnsafeMutableBufferPointer { client.read(into: $0.baseAddress!, frames: n) }
        }
        stop.raised.store(true, ordering: .relaxed)
        producer.join()
        #expect(timedOut == 0, "\(timedOut) waits of 2 s ended without their wakeup")
        #expect(slept > 500, "the consumer slept \(slept) times: the race was not run")
    }

    /// Whatever a client writes there, the audio thread neither traps nor stops waking it: a
    /// threshold past half the ring counts as half the ring.
    @Test(arguments: [UInt64.max, UInt64(Int64.max) + 1, 1 << 40, 1025])
    func anImpossibleThresholdStillWakesAtHalfTheRing(threshold: UInt64) throws {
        let size = SharedRing.byteSize(channels: 2, capacity: 1024)
        let raw = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, client.fileDescriptor.rawValue, 0))
        defer { munmap(raw, size) }
        raw.storeBytes(of: threshold, toByteOffset: 240, as: UInt64.self)
        #expect(wakes(over: 9) == [7, 8], "512 of 1024 frames waiting after the eighth write")
    }
}
