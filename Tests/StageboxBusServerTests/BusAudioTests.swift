import Synchronization
import Foundation
import StageboxClient
import StageboxProtocol
import StageboxTestSupport
import Testing

extension BusTests {
    @Suite struct BusAudioTests {
        @Test func aSenderReachesAReceiverBitExactAtInt16() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let a = try bus.client("player")
            let b = try bus.client("recorder")
            let out = try a.addSender(name: "out", channels: 2, format: .int16)
            let inp = try b.addReceiver(name: "in", channels: 2, format: .int16)
            try a.connect(from: out.name, to: inp.name)
            #expect(eventually { out.isConnected && inp.isConnected }, "isConnected follows the connection")

            // A known 16-bit sequence, sent paced by the bus.
            let frames = 48000 / 2
            var x: UInt32 = 99
            let sent: [Int16] = (0..<(frames * 2)).map { _ in x = x &* 1_664_525 &+ 1_013_904_223; return Int16(truncatingIfNeeded: x >> 16) }
            // A port is not Sendable: the sender thread has it until it signals `finished`.
            nonisolated(unsafe) let handedOver = out
            let finished = DispatchSemaphore(value: 0)
            let sender = Thread {
                defer { finished.signal() }
                var offset = 0
                while offset < frames {
                    let n = min(480, frames - offset)
                    _ = handedOver.waitForSpace(frames: n, timeoutSeconds: 2)
                    sent.withUnsafeBufferPointer { handedOver.send(int16: $0.baseAddress! + offset * 2, frames: n) }
                    offset += n
                }
                _ = handedOver.drain(timeoutSeconds: 10) // the stream ends: its last frames go at once
            }
            sender.start()
            var senderDone = false
            let received = receiveStream(inp) {
                senderDone = senderDone || finished.wait(timeout: .now()) == .success
                return senderDone
            }
            judgeBitExact(received: received, sent: sent, port: inp, what: "Swift sender → Swift receiver")
            #expect(out.ratio == 1 && !out.isConverting, "equal rates and a bus-paced sender: no resampling")
        }

        @Test func twoSendersMixAndMuteSilences() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("mixer")
            let s1 = try c.addSender(name: "a", channels: 1)
            let s2 = try c.addSender(name: "b", channels: 1)
            let r = try c.addReceiver(name: "mix", channels: 1)
            try c.connect(from: s1.name, to: r.name)
            try c.connect(from: s2.name, to: r.name)
            let feeding = Feeder([(s1, 0.25), (s2, 0.5)])
            defer { feeding.stop() }
            let mixed = readUntilRun(of: 0.75, length: 2400, from: r)
            #expect(mixed.found, "the receiver gets the mix: \(mixed.summary)")
            try c.setMuted(s2.name, true)
            #expect(eventually { s2.isMuted })
            // A run longer than the receiver's ring (16384 frames) ends after everything the ring
            // held before the mute: from then on the muted sender must not be heard again.
            let muted = readUntilRun(of: 0.25, length: 20000, from: r)
            #expect(muted.found, "a muted sender is silent: \(muted.summary)")
            let later = collect(r, frames: 4800)
            #expect(!later.contains { abs($0 - 0.75) < 1e-6 }, "and stays silent")
        }

        /// Muting a client's receiver silences what the client takes (the flag alone is not
        /// enough), and what it takes leaves the bus clamped to [-1, 1].
        @Test func aMutedReceiverTakesSilenceAndTheMixIsClamped() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("muter")
            let s1 = try c.addSender(name: "a", channels: 1)
            let s2 = try c.addSender(name: "b", channels: 1)
            let r = try c.addReceiver(name: "in", channels: 1)
            try c.connect(from: s1.name, to: r.name)
            try c.connect(from: s2.name, to: r.name)
            let feeding = Feeder([(s1, 0.75), (s2, 0.75)])
            defer { feeding.stop() }
            let loud = readUntilRun(of: 1, length: 2400, from: r)
            #expect(loud.found, "1.5 leaves the bus as 1: \(loud.summary)")
            #expect(loud.seen.allSatisfy { abs($0) <= 1 }, "nothing leaves the bus beyond ±1: \(loud.summary)")
            try c.setMuted(r.name, true)
            #expect(eventually { r.isMuted })
            // What the ring held before the mute comes out first; a run of silence longer than the
            // ring (16384 frames) ends past all of it.
            let muted = readUntilRun(of: 0, length: 20000, from: r)
            #expect(muted.found, "a muted receiver takes silence: \(muted.summary)")
            let later = collect(r, frames: 4800)
            #expect(later.allSatisfy { $0 == 0 }, "and goes on taking silence: \(later.max() ?? 0)")
        }

        @Test func aFilterProcessesInPlace() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("fx")
            let s = try c.addSender(name: "src", channels: 1)
            let f = try c.addFilter(name: "half", channels: 1) { samples, frames, _ in
                for i in 0..<frames { samples[i] *= 0.5 }
            }
            let r = try c.addReceiver(name: "sink", channels: 1)
            try c.connect(from: s.name, to: f.name)
            try c.connect(from: f.name, to: r.name)
            let feeding = Feeder([(s, 0.5)])
            defer { feeding.stop() }
            let got = readUntilRun(of: 0.25, length: 2400, from: r)
            #expect(got.found, "processed by the filter, 0.5 × 0.5: \(got.summary)")
            // Besides the processed signal only silence (the feeder starved), the input itself (the
            // filter missed its deadline under load and was bypassed) or the fades between them.
            #expect(got.seen.allSatisfy { (0...0.5).contains($0) }, "nothing else: \(got.summary)")
            _ = f
        }

        @Test func aFilterThatMissesItsDeadlineIsBypassedAndTheAudioKeepsRunning() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("slowfx")
            let s = try c.addSender(name: "src", channels: 1)
            let f = try c.addFilter(name: "slow", channels: 1) { samples, frames, _ in
                usleep(20_000) // far past a quarter of a 1.33 ms period
                for i in 0..<frames { samples[i] = 0 }
            }
            let r = try c.addReceiver(name: "sink", channels: 1)
            try c.connect(from: s.name, to: f.name)
            try c.connect(from: f.name, to: r.name)
            let feeding = Feeder([(s, 0.5)])
            defer { feeding.stop() }
            let before = bus.periods
            _ = collect(r, frames: 9600)
            let got = collect(r, frames: 9600)
            let after = bus.periods
            #expect(after - before >= 250, "the audio kept running: \(after - before) periods")
            #expect(got.allSatisfy { $0 == 0 || abs($0 - 0.5) < 1e-6 }, "only the input or silence (a starved feeder): \(got.max() ?? 0)")
            let bypassed = readUntilRun(of: 0.5, length: 4800, from: r)
            #expect(bypassed.found, "bypassed: the input passes unprocessed: \(bypassed.summary)")
            let record = bus.server.clients.first { $0.name == "slowfx" }?.ports.first { $0.name == f.name }
            #expect((record?.counters.deadlineMisses.load(ordering: .relaxed) ?? 0) > 0)
            #expect(record?.counters.late.load(ordering: .relaxed) == true, "marked late after repeated misses")
        }
    }
}

/// Keeps senders fed with constants, paced by the bus, on a thread of its own.
final class Feeder: Sendable {
    private let box = StopBox()
    private let finished = DispatchSemaphore(value: 0)

    init(_ senders: [(SenderPort, Float)]) {
        let box = self.box
        let finished = self.finished
        // Ports are not Sendable: the feeding thread has them until `stop` returns.
        nonisolated(unsafe) let senders = senders
        Thread {
            defer { finished.signal() }
            let blocks = senders.map { [Float](repeating: $0.1, count: 256 * $0.0.channels) }
            while !box.stopped {
                for (i, (s, _)) in senders.enumerated() where s.waitForSpace(frames: 256, timeoutSeconds: 0.1) {
                    blocks[i].withUnsafeBufferPointer { s.send($0.baseAddress!, frames: 256) }
                }
            }
        }.start()
    }

    func stop() {
        box.stopped = true
        finished.wait()
    }
}

final class StopBox: Sendable {
    private let flag = Atomic<Bool>(false)
    var stopped: Bool {
        get { flag.load(ordering: .relaxed) }
        set { flag.store(newValue, ordering: .relaxed) }
    }
}

extension BusTests {
    @Suite struct SeparateStreamsTests {
        @Test func aReceiverGetsEachSourceApartOncePerInterval() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("sep")
            let a = try c.addSender(name: "a", channels: 1)
            let b = try c.addSender(name: "b", channels: 1)
            let r = try c.addReceiver(name: "multi", channels: 1, separateStreams: true)
            #expect(r.isSeparate)
            try c.connect(from: a.name, to: r.name)
            try c.connect(from: b.name, to: r.name)
            try c.connect(from: "codec.in", to: r.name) // a stereo source averaged into the mono stream
            #expect(eventually { r.sourceSlots.prefix(3) == ["sep.a", "sep.b", "codec.in"] }, "\(r.sourceSlots)")
            let feeding = Feeder([(a, 0.25), (b, -0.5)])
            defer { feeding.stop() }
            var seen: [String: [Float]] = [:]
            var intervals = 0
            // Until each source has been heard alone for 3200 frames in a row: a starved feeder
            // leaves silence in between, which is timing, not the separation under test.
            func heardAlone() -> Bool {
                longestRun(of: 0.25, in: seen["sep.a"] ?? []) >= 3200 && longestRun(of: -0.5, in: seen["sep.b"] ?? []) >= 3200
            }
            let end = Date().addingTimeInterval(30)
            while (intervals < 400 || !heardAlone()) && Date() < end {
                if r.receiveInterval({ name, samples, frames in
                    seen[name, default: []] += Array(UnsafeBufferPointer(start: samples, count: frames))
                }) {
                    intervals += 1
                } else {
                    _ = r.waitForData(frames: 64, timeoutSeconds: 0.1)
                }
            }
            #expect(intervals >= 400)
            #expect(Set(seen.keys) == ["sep.a", "sep.b", "codec.in"])
            #expect(heardAlone(), "each source alone, unmixed")
            #expect((seen["sep.a"] ?? []).allSatisfy { (0...0.25).contains($0) }, "source a never mixed with b")
            #expect((seen["sep.b"] ?? []).allSatisfy { (-0.5...0).contains($0) }, "source b never mixed with a")
            #expect((seen["codec.in"] ?? []).allSatisfy { $0 == 0 }, "the silent codec inputs")
            try c.disconnect(from: a.name, to: r.name)
            #expect(eventually { r.sourceSlots.prefix(2) == ["sep.b", "codec.in"] }, "slots follow the connections")
        }
    }
}

/// The longest stretch of `samples` equal to `value`.
func longestRun(of value: Float, in samples: [Float]) -> Int {
    var longest = 0, run = 0
    for v in samples {
        run = v == value ? run + 1 : 0
        longest = max(longest, run)
    }
    return longest
}
