import StageboxProtocol
import StageboxSystem

/// A sender port: the program puts audio on the bus (Audiobus's `ABAudioSenderPort`).
///
/// `send` never blocks: when the bus has not taken earlier audio yet and the ring is full, the
/// oldest frames are dropped (an overrun). A program that is not paced by a clock of its own can
/// pace itself on the bus with `waitForSpace`; its samples then pass bit for bit at equal rates.
///
/// Not Sendable: its converter, drift state and scratch buffers belong to the one thread that
/// sends (as with any audio port). A program hands the port to that thread once; what other
/// threads may want to know (connected, muted, fill) is atomic underneath.
public final class SenderPort {
    public let name: String
    public let channels: Int
    /// The program's sample rate; the bus converts.
    public let sampleRate: Int
    let ring: SharedRing
    let wake: Wakeup
    private let adapter: RateAdapter
    private var drift: DriftController
    private let state: PortState?
    private weak var client: BusClient?
    private var converted: [Float]
    private var integers: [Float]
    private var ended = false

    init(client: BusClient, info: PortInfo, fds: [OwnedDescriptor], sampleRate: Int) throws(BusClientError) {
        (ring, wake) = try mapRingAndWake(fds, port: "sender")
        name = info.name
        channels = info.channels
        self.sampleRate = sampleRate
        self.client = client
        state = client.state(of: info.name)
        let nominal = Double(client.sampleRate) / Double(sampleRate)
        adapter = RateAdapter(channels: channels, nominalRatio: nominal)
        drift = DriftController(direction: .toBus, nominalRatio: nominal, busRate: client.sampleRate, period: client.period)
        converted = [Float](repeating: 0, count: 8192 * channels)
        integers = [Float](repeating: 0, count: 8192 * channels)
    }

    deinit { client?.removePort(name) }

    /// Whether anything on the bus takes this port's audio. Safe on a real-time thread.
    public var isConnected: Bool { state?.connected.load(ordering: .relaxed) ?? false }
    /// Whether the port is muted on the bus. Safe on a real-time thread.
    public var isMuted: Bool { state?.muted.load(ordering: .relaxed) ?? false }

    /// Frames waiting in the ring for the bus to take (bus rate).
    public var fill: Int { ring.available }
    /// The fill level drift correction holds the ring at: the start cushion (bus frames).
    public var targetFill: Int { ring.startThreshold }
    /// Periods the bus found the ring empty.
    public var underruns: Int { ring.underruns }
    /// Times frames were dropped because the ring was full.
    public var overruns: Int { ring.overruns }
    /// The conversion ratio in use (bus frames per program frame).
    public var ratio: Double { adapter.ratio }
    /// The program's clock against the codec's (program frames per codec frame, in bus units),
    /// once a drift has been measured; nil while none has.
    public var measuredClockRatio: Double? { drift.measured }
    /// Whether samples are being converted (different rates, or a measured drift).
    public var isConverting: Bool { adapter.engaged }

    /// Where the bus stands in this port's ring: how many frames it has taken (the ring position
    /// it reads next, in bus frames from the port's first) and the codec frame of the period it
    /// last processed, or nil before its first period.
    ///
    /// In a period in which the bus takes frames, it stamps the period's codec frame C and then
    /// takes one period from position R: frame R + i plays at codec frame C + i. Read between
    /// two periods, this gives R + period as `taken` and C as `codecFrame`. Read while the bus
    /// is inside a period (rarely: it is microseconds), `codecFrame − taken` comes out one
    /// period larger; the least of a few readings is the true one. (`taken` is read first so
    /// that a period beginning between the two reads errs the same way.)
    public var busPosition: (taken: Int64, codecFrame: Int64)? {
        let taken = Int64(truncatingIfNeeded: ring.readPositionNow)
        guard let clock = ring.clock() else { return nil }
        return (taken, clock.codecFrame)
    }

    /// Frames sent that the bus has not taken yet, in the program's frames (what the ring
    /// holds, converted back to the program's rate).
    public var pendingFrames: Int { Int((Double(ring.available) / adapter.ratio).rounded()) }

    /// The descriptor the bus signals after every period it has taken from this port (readable
    /// with POLLIN), for a program that waits in its own `poll` beside other descriptors.
    public var wakeupDescriptor: Int32 { wake.descriptor }

    /// Takes the wakeups pending on `wakeupDescriptor`. A program that sends when woken there is
    /// paced by the bus, as one that waits in `waitForSpace` is: its clock is the bus's, and at
    /// equal rates its samples pass bit for bit.
    public func takeWakeups() {
        wake.drain()
        drift.noteBusWait(at: monotonicNanoseconds())
    }

    /// Puts `frames` interleaved Float32 frames on the bus.
    ///
    /// The bus starts taking the port's audio once two of the program's blocks are waiting
    /// (and again after an underrun): a cushion against the program's own timing jitter.
    public func send(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        ended = false
        let cushion = Int(Double(2 * frames) * adapter.nominalRatio)
        if cushion > ring.startThreshold { ring.startThreshold = cushion }
        push(samples, frames: frames, endOfInput: false)
        let now = monotonicNanoseconds()
        if let r = drift.observe(now: now, frames: frames, fill: ring.available, target: ring.startThreshold,
                                 clock: ring.clock()) {
            if r != adapter.nominalRatio { adapter.engage() }
            adapter.ratio = r
        }
        ring.ratio = adapter.ratio
        ring.targetFill = ring.startThreshold
    }

    /// Converts and writes; with `endOfInput`, flushes what the converter still holds.
    private func push(_ samples: UnsafePointer<Float>?, frames: Int, endOfInput: Bool) {
        var offset = 0
        // Bounded: every pass uses input or produces output, or the loop ends.
        for _ in 0..<(frames + 64) {
            let room = converted.count / channels
            let (used, produced) = converted.withUnsafeMutableBufferPointer {
                adapter.convert(samples.map { $0 + offset * channels }, frames: frames - offset, into: $0.baseAddress!,
                                capacity: room, endOfInput: endOfInput)
            }
            if produced > 0 { converted.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: produced) } }
            offset += used
            if offset >= frames && (!endOfInput || produced == 0) { break }
            if used == 0 && produced == 0 { break }
        }
    }

    /// Puts `frames` interleaved 16-bit frames on the bus.
    public func send(int16 samples: UnsafePointer<Int16>, frames: Int) {
        var offset = 0
        while offset < frames {
            let chunk = min(frames - offset, integers.count / channels)
            for i in 0..<(chunk * channels) { integers[i] = Float(samples[offset * channels + i]) * (1 / 32768) }
            integers.withUnsafeBufferPointer { send($0.baseAddress!, frames: chunk) }
            offset += chunk
        }
    }

    /// Waits until the ring has room for `frames` program frames, or `timeoutSeconds` pass.
    /// A program that waits here is paced by the bus, and its clock is the bus's.
    public func waitForSpace(frames: Int, timeoutSeconds: Double) -> Bool {
        let need = Int((Double(frames) * adapter.nominalRatio * 1.01).rounded(.up)) + 16
        let deadline = monotonicSeconds() + timeoutSeconds
        if ring.capacity - ring.available < need { drift.noteBusWait(at: monotonicNanoseconds()) }
        while ring.capacity - ring.available < need {
            let left = deadline - monotonicSeconds()
            if left <= 0 { return false }
            _ = wake.wait(timeoutNanos: Int64(min(left, 0.05) * 1e9))
        }
        return true
    }

    /// The stream ends here: what the converter still holds is flushed, and the bus takes the
    /// last frames at once, however few (padding its period with silence). Sending again
    /// starts a new stream.
    public func finish() {
        guard !ended else { return }
        ended = true
        if adapter.engaged { push(nil, frames: 0, endOfInput: true) }
        ring.markEndOfStream()
        wake.signal()
    }

    /// Ends the stream (`finish`) and waits until the bus has taken every frame of it, or the
    /// timeout passes. Returns as soon as the last frame is taken.
    public func drain(timeoutSeconds: Double) -> Bool {
        finish()
        let deadline = monotonicSeconds() + timeoutSeconds
        while !ring.isDrained {
            let left = deadline - monotonicSeconds()
            if left <= 0 { return false }
            _ = wake.wait(timeoutNanos: Int64(min(left, 0.02) * 1e9))
        }
        return true
    }
}

/// Maps the ring and adopts the wakeup that came with a sender's or receiver's creation. On
/// any failure the descriptors close with `fds`.
func mapRingAndWake(_ fds: [OwnedDescriptor], port: String) throws(BusClientError) -> (SharedRing, Wakeup) {
    guard fds.count == 2 else { throw .connection("\(port) port came with \(fds.count) descriptors, not 2") }
    let ring: SharedRing
    do { ring = try SharedRing.map(fds[0]) } catch {
        throw .connection("cannot map the port's shared memory: \(error)")
    }
    return (ring, try adoptWakeup(fds[1]))
}

/// The wakeup a port's creation came with, taken from its owner.
func adoptWakeup(_ fd: OwnedDescriptor) throws(BusClientError) -> Wakeup {
    guard let taken = fd.take() else { throw .connection("a port's wakeup descriptor was already taken") }
    return Wakeup(adopting: taken)
}
