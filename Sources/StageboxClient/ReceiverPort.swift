import StageboxProtocol
import StageboxSystem

/// A receiver port: the program takes audio off the bus (Audiobus's `ABAudioReceiverPort`),
/// the mix of everything connected to it, at the program's own rate and pace.
///
/// Not Sendable: its converter, drift state, FIFO and scratch buffers belong to the one thread
/// that receives (as with any audio port). A program hands the port to that thread once.
public final class ReceiverPort {
    public let name: String
    public let channels: Int
    public let sampleRate: Int
    let ring: SharedRing
    let wake: Wakeup
    private let adapter: RateAdapter
    private var drift: DriftController
    private let state: PortState?
    private weak var client: BusClient?
    /// The bus's period (the server tells it at hello): one block read from the ring.
    private let period: Int
    private var busBlock: [Float]
    /// Converted frames not yet handed out, at the program's rate.
    private var fifo: [Float]
    private var fifoFrames = 0
    private var integers: [Float]
    /// Whether reading has started: it waits for a cushion of two requests plus two periods.
    private var primed = false
    /// The timestamp of the bus block the last `receive` started in.
    public private(set) var lastTimestamp: FrameTimestamp?

    init(client: BusClient, info: PortInfo, fds: [OwnedDescriptor], sampleRate: Int) throws(BusClientError) {
        (ring, wake) = try mapRingAndWake(fds, port: "receiver")
        name = info.name
        channels = info.channels
        self.sampleRate = sampleRate
        self.client = client
        state = client.state(of: info.name)
        period = client.period
        let busRate = client.sampleRate
        let nominal = Double(sampleRate) / Double(busRate)
        adapter = RateAdapter(channels: channels, nominalRatio: nominal)
        drift = DriftController(direction: .fromBus, nominalRatio: nominal, busRate: busRate, period: client.period)
        busBlock = [Float](repeating: 0, count: period * ring.channels)
        fifo = [Float](repeating: 0, count: 16384 * channels)
        integers = [Float](repeating: 0, count: 8192 * channels)
    }

    deinit { client?.removePort(name) }

    public var isConnected: Bool { state?.connected.load(ordering: .relaxed) ?? false }
    public var isMuted: Bool { state?.muted.load(ordering: .relaxed) ?? false }
    public var fill: Int { ring.available }
    public var underruns: Int { ring.underruns }
    public var overruns: Int { ring.overruns }
    public var ratio: Double { adapter.ratio }
    /// The fill level drift correction holds the ring at before each read (bus frames): two of
    /// the program's requests plus two periods, the start cushion.
    public private(set) var targetFill = 0
    /// The program's clock against the codec's (see `SenderPort.measuredClockRatio`).
    public var measuredClockRatio: Double? { drift.measured }
    /// Whether samples are being converted (different rates, or a measured drift).
    public var isConverting: Bool { adapter.engaged }

    /// Frames the bus has delivered that the program has not received yet, in the program's
    /// frames (the ring's, converted, and what the converter has ready).
    public var pendingFrames: Int { Int((Double(ring.available) * adapter.ratio).rounded(.down)) + fifoFrames }

    /// The descriptor the bus signals after every period it has delivered (see `SenderPort`),
    /// except while `waitForData` waits on this port: then once the frames it waits for are
    /// there. Like the rest of a port, for one thread at a time.
    public var wakeupDescriptor: Int32 { wake.descriptor }

    /// Takes the pending wakeups; a program that receives when woken is paced by the bus.
    public func takeWakeups() {
        wake.drain()
        drift.noteBusWait(at: monotonicNanoseconds())
    }

    /// Fills `frames` interleaved frames from the bus. When the bus has not delivered enough,
    /// the rest is silence, an underrun is counted, and false is returned. Never blocks.
    @discardableResult
    public func receive(into samples: UnsafeMutablePointer<Float>, frames: Int) -> Bool {
        // The program's clock is every frame it asks for, whether the bus has it yet or not.
        targetFill = cushion(for: frames)
        if let r = drift.observe(now: monotonicNanoseconds(), frames: frames, fill: ring.available, target: targetFill,
                                 clock: ring.clock()) {
            if r != adapter.nominalRatio { adapter.engage() }
            adapter.ratio = r
        }
        ring.targetFill = targetFill
        if !primed {
            // Start (and restart after an underrun) with a cushion against the program's jitter.
            guard ring.available >= cushion(for: frames) else {
                samples.update(repeating: 0, count: frames * channels)
                return false
            }
            primed = true
        }
        var complete = true
        while fifoFrames < frames {
            if let t = ring.timestamp(atOrBefore: ring.readPositionNow) {
                lastTimestamp = FrameTimestamp(codecFrame: t.codecFrame, hostNanos: t.hostNanos)
            }
            let got = busBlock.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, frames: period) }
            if !got { complete = false; break }
            var used = 0
            // Bounded: every pass uses input or produces output, or the loop ends.
            for _ in 0..<(period + 8) {
                if used >= period { break }
                let room = fifo.count / channels - fifoFrames
                let (u, n) = busBlock.withUnsafeBufferPointer { input in
                    fifo.withUnsafeMutableBufferPointer { out in
                        adapter.convert(input.baseAddress! + used * channels, frames: period - used,
                                        into: out.baseAddress! + fifoFrames * channels, capacity: room)
                    }
                }
                used += u
                fifoFrames += n
                if u == 0 && n == 0 { break }
            }
        }
        ring.ratio = adapter.ratio
        let take = min(frames, fifoFrames)
        fifo.withUnsafeBufferPointer { samples.update(from: $0.baseAddress!, count: take * channels) }
        if take < frames {
            (samples + take * channels).update(repeating: 0, count: (frames - take) * channels)
            ring.countUnderrun()
            primed = false
        }
        fifo.withUnsafeMutableBufferPointer { f in
            let rest = (fifoFrames - take) * channels
            if rest > 0 { f.baseAddress!.update(from: f.baseAddress! + take * channels, count: rest) }
        }
        fifoFrames -= take
        return complete || take == frames
    }

    /// Fills `frames` interleaved 16-bit frames from the bus (see `receive(into:frames:)`).
    @discardableResult
    public func receive(int16 samples: UnsafeMutablePointer<Int16>, frames: Int) -> Bool {
        var ok = true
        var offset = 0
        while offset < frames {
            let n = min(frames - offset, integers.count / channels)
            ok = integers.withUnsafeMutableBufferPointer { receive(into: $0.baseAddress!, frames: n) } && ok
            for i in 0..<(n * channels) {
                let x = (integers[i] * 32768).rounded()
                samples[offset * channels + i] = Int16(max(-32768, min(32767, x)))
            }
            offset += n
        }
        return ok
    }

    // MARK: Separate streams

    /// Whether the port takes its sources apart (see `BusClient.addReceiver(separateStreams:)`).
    public var isSeparate: Bool { ring.channels > channels }

    /// The sources connected to a separate-streams port, by slot ("" for an empty slot).
    public var sourceSlots: [String] { ring.sourceNames() }

    /// Separate streams: takes one interval (one bus period) off the bus and hands each
    /// connected source's audio to `body` (interleaved, the port's channel count); returning is
    /// the end-of-interval mark. False when no whole interval is waiting.
    public func receiveInterval(_ body: (_ source: String, _ samples: UnsafePointer<Float>, _ frames: Int) -> Void) -> Bool {
        let stride = ring.channels
        let got = busBlock.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, frames: period) }
        guard got else { return false }
        let names = ring.sourceNames()
        for (slot, name) in names.enumerated() where !name.isEmpty && (slot + 1) * channels <= stride {
            for i in 0..<period {
                for c in 0..<channels { integers[i * channels + c] = busBlock[i * stride + slot * channels + c] }
            }
            integers.withUnsafeBufferPointer { body(name, $0.baseAddress!, period) }
        }
        return true
    }

    /// Bus frames to wait for before reading starts: two requests plus two periods.
    private func cushion(for frames: Int) -> Int {
        Int(Double(2 * frames) / adapter.nominalRatio) + 2 * period
    }

    /// Waits until `receive` of `frames` frames would find them all (the first time, also the
    /// start cushion), or the timeout passes.
    public func waitForData(frames: Int, timeoutSeconds: Double) -> Bool {
        var need = Int((Double(frames) / adapter.nominalRatio).rounded(.up))
        if !primed { need = max(need, cushion(for: frames)) }
        let deadline = monotonicSeconds() + timeoutSeconds
        // A program that waits here is paced by the bus, and its clock is the bus's.
        if ring.available + Int(Double(fifoFrames) / adapter.nominalRatio) < need {
            drift.noteBusWait(at: monotonicNanoseconds())
        }
        // Woken once what is missing has come, not every period; a program that polls the
        // wakeup descriptor itself is woken every period again afterwards.
        ring.setWakeThreshold(need - Int(Double(fifoFrames) / adapter.nominalRatio))
        defer { ring.setWakeThreshold(0) }
        while ring.available + Int(Double(fifoFrames) / adapter.nominalRatio) < need {
            let left = deadline - monotonicSeconds()
            if left <= 0 { return false }
            _ = wake.wait(timeoutNanos: Int64(min(left, 0.05) * 1e9))
        }
        return true
    }
}
