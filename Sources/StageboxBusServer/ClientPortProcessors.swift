import StageboxEngine
import StageboxProtocol
import Synchronization
import StageboxSystem

/// Counters of one client port that the audio thread keeps and others read.
public final class ClientPortCounters: Sendable {
    /// Periods in which a filter client missed its deadline and was bypassed.
    public let deadlineMisses = Atomic<Int>(0)
    /// Whether a filter is marked late (bypassed without waiting until it catches up).
    public let late = Atomic<Bool>(false)
    /// The first fault found in one of the port's rings (`RingFault`'s raw value; 0 = none).
    /// From then on the port is silent, and the server disconnects its client.
    public let ringFault = Atomic<UInt8>(0)
    public init() {}

    /// Audio side: notes the ring's fault, if it has one; true when the port is faulted.
    @inline(__always)
    func faulted(_ ring: SharedRing) -> Bool {
        if ringFault.load(ordering: .relaxed) != 0 { return true }
        guard let fault = ring.fault else { return false }
        ringFault.store(fault.rawValue, ordering: .relaxed)
        return true
    }

    public var fault: RingFault? { RingFault(rawValue: ringFault.load(ordering: .relaxed)) }
}

extension SharedRing {
    /// Audio side: publishes where this period sits on the codec clock.
    @inline(__always)
    func stamp(_ cycle: CycleInfo) { setClock(codecFrame: cycle.framePosition, hostNanos: cycle.hostTimeNanos) }

    @inline(__always)
    func timestamp(_ cycle: CycleInfo) -> Timestamp {
        Timestamp(ringPosition: 0, codecFrame: cycle.framePosition, hostNanos: cycle.hostTimeNanos)
    }
}

/// A client's sender on the audio thread: takes one period from the client's ring,
/// or silence and an underrun when the client has not delivered it.
final class ClientSenderProcessor: PortProcessor, @unchecked Sendable {
    // @unchecked: `primed` is touched by the audio thread only; the rest is immutable or atomic.
    let ring: SharedRing
    let wake: Wakeup
    let counters: ClientPortCounters
    /// Whether the client has built up its start cushion (see `SharedRing.startThreshold`).
    private var primed = false
    /// The codec outputs' fade: while it fades in after a start or resume, the ring is left
    /// alone (it holds what the client sent), so the client's first frames play after it.
    let fade: OutputFade?

    init(ring: SharedRing, wake: Wakeup, counters: ClientPortCounters, fade: OutputFade? = nil) {
        self.ring = ring
        self.wake = wake
        self.counters = counters
        self.fade = fade
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        ring.stamp(cycle)
        if let fade, fade.isFadingIn { return buffer.clear(frames: frames) }
        defer { wake.signal() } // room was made: a client that paces itself on the ring may write again
        let waiting = ring.availableChecked
        if counters.faulted(ring) { return buffer.clear(frames: frames) }
        // The end of a stream is taken at once, however short: nothing is left behind.
        if ring.producerEnded && waiting < frames {
            buffer.clear(frames: frames)
            if waiting > 0 { _ = ring.read(planar: { buffer.channel($0) }, frames: waiting) }
            primed = false
            return buffer.replaceNonFinite(frames: waiting)
        }
        if !primed && waiting >= max(frames, ring.startThreshold) { primed = true }
        if !primed {
            buffer.clear(frames: frames) // still filling the cushion: silence, not an underrun
        } else if ring.read(planar: { buffer.channel($0) }, frames: frames) {
            buffer.replaceNonFinite(frames: frames)
        } else {
            buffer.clear(frames: frames)
            if !counters.faulted(ring) { ring.countUnderrun() }
            primed = false
        }
    }
}

/// A client's receiver on the audio thread: puts the period's mix in the client's ring with its
/// timestamp and wakes the client, when it waits for no more than is there (a client that
/// takes 20 ms at a time is woken every 20 ms). A full ring drops its oldest frames (an overrun).
final class ClientReceiverProcessor: PortProcessor, @unchecked Sendable {
    // @unchecked: immutable references; the ring's producer state is the audio thread's alone.
    let ring: SharedRing
    let wake: Wakeup
    let counters: ClientPortCounters

    init(ring: SharedRing, wake: Wakeup, counters: ClientPortCounters) {
        self.ring = ring
        self.wake = wake
        self.counters = counters
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        ring.stamp(cycle)
        if counters.faulted(ring) { return }
        ring.write(planar: { UnsafePointer(buffer.channel($0)) }, frames: frames, timestamp: ring.timestamp(cycle))
        if ring.consumerWantsWakeup { wake.signal() }
    }
}

/// A client's receiver that takes its sources apart: the ring is `slots` times as wide as the
/// port, each source in its own group of channels, in the order of the port's connections; the
/// control side names them in the ring's header. Each period is one interval of the stream.
final class ClientSeparateReceiverProcessor: SeparateInputsProcessor, @unchecked Sendable {
    // @unchecked: the scratch buffers are the audio thread's alone; the rest is immutable.
    let ring: SharedRing
    let wake: Wakeup
    let counters: ClientPortCounters
    private let scratch: AudioBuffer
    private let wide: UnsafeMutablePointer<Float>
    private let channels: Int

    init(ring: SharedRing, wake: Wakeup, channels: Int, period: Int, counters: ClientPortCounters) {
        self.ring = ring
        self.wake = wake
        self.channels = channels
        self.counters = counters
        scratch = AudioBuffer(channels: channels, capacity: period)
        wide = .allocate(capacity: period * ring.channels)
        wide.initialize(repeating: 0, count: period * ring.channels) // touched here, not on the audio thread
    }

    deinit { wide.deallocate() }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {}

    func process(inputs: [PortInput], frames: Int, cycle: CycleInfo) {
        ring.stamp(cycle)
        if counters.faulted(ring) { return }
        let stride = ring.channels
        wide.update(repeating: 0, count: frames * stride)
        for slot in 0..<min(inputs.count, SharedRing.sourceSlots) {
            scratch.clear(frames: frames)
            inputs[slot].mix(into: scratch, frames: frames)
            scratch.clamp(frames: frames)
            for c in 0..<channels {
                let src = scratch.channel(c)
                let column = slot * channels + c
                for i in 0..<frames { wide[i * stride + column] = src[i] }
            }
        }
        ring.write(wide, frames: frames, timestamp: ring.timestamp(cycle))
        if ring.consumerWantsWakeup { wake.signal() }
    }
}
