import StageboxBus
import StageboxProtocol
import StageboxRealtime
import Synchronization

/// Counters of one client port that the audio thread keeps and others read.
public final class ClientPortCounters: Sendable {
    /// Periods in which a filter client missed its deadline and was bypassed.
    public let deadlineMisses = Atomic<Int>(0)
    /// Whether a filter is marked late (bypassed without waiting until it catches up).
    public let late = Atomic<Bool>(false)
    public init() {}
}

/// A client's sender on the audio thread: takes one period from the client's ring,
/// or silence and an underrun when the client has not delivered it.
final class ClientSenderProcessor: PortProcessor, @unchecked Sendable {
    let ring: SharedRing
    let wake: EventFD
    /// Whether the client has built up its start cushion (see `SharedRing.startThreshold`).
    private var primed = false

    init(ring: SharedRing, wake: EventFD) {
        self.ring = ring
        self.wake = wake
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        if !primed && ring.available >= max(frames, ring.startThreshold) { primed = true }
        if !primed {
            buffer.clear(frames: frames) // still filling the cushion: silence, not an underrun
        } else if !ring.read(planar: { buffer.channel($0) }, frames: frames) {
            buffer.clear(frames: frames)
            ring.countUnderrun()
            primed = false
        }
        // Room was made: a client that paces itself on the ring may write again.
        wake.signal()
    }
}

/// A client's receiver on the audio thread: puts the period's mix in the client's ring with its
/// timestamp and wakes the client. A full ring drops its oldest frames (an overrun).
final class ClientReceiverProcessor: PortProcessor, @unchecked Sendable {
    let ring: SharedRing
    let wake: EventFD

    init(ring: SharedRing, wake: EventFD) {
        self.ring = ring
        self.wake = wake
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        ring.write(planar: { UnsafePointer(buffer.channel($0)) }, frames: frames,
                   timestamp: .init(ringPosition: 0, codecFrame: cycle.framePosition, hostNanos: cycle.hostTimeNanos))
        wake.signal()
    }
}

/// A client's receiver that takes its sources apart: the ring is `slots` times as wide as the
/// port, each source in its own group of channels, in the order of the port's connections; the
/// control side names them in the ring's header. Each period is one interval of the stream.
final class ClientSeparateReceiverProcessor: SeparateInputsProcessor, @unchecked Sendable {
    let ring: SharedRing
    let wake: EventFD
    private let scratch: AudioBuffer
    private let wide: UnsafeMutablePointer<Float>
    private let channels: Int

    init(ring: SharedRing, wake: EventFD, channels: Int, maxFrames: Int) {
        self.ring = ring
        self.wake = wake
        self.channels = channels
        scratch = AudioBuffer(channels: channels, capacity: maxFrames)
        wide = .allocate(capacity: maxFrames * ring.channels)
    }

    deinit { wide.deallocate() }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {}

    func process(inputs: [PortInput], frames: Int, cycle: CycleInfo) {
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
        ring.write(wide, frames: frames,
                   timestamp: .init(ringPosition: 0, codecFrame: cycle.framePosition, hostNanos: cycle.hostTimeNanos))
        wake.signal()
    }
}

/// A client's filter in the signal path: the period goes to the client, and the audio thread
/// waits for the processed period at most `deadlineNanos`. A client that misses the deadline is
/// bypassed for that period (the audio passes unprocessed); after `lateAfter` misses in a row it
/// is marked late and bypassed without waiting until it has caught up.
final class ClientFilterProcessor: PortProcessor, @unchecked Sendable {
    let toClient: SharedRing
    let fromClient: SharedRing
    let wakeClient: EventFD
    let wakeServer: EventFD
    let deadlineNanos: Int64
    let counters: ClientPortCounters
    private let scratch: AudioBuffer
    private let lateAfter = 8
    private var missesInARow = 0
    /// Processed periods that will still arrive for periods we already gave up on.
    private var stale = 0

    init(toClient: SharedRing, fromClient: SharedRing, wakeClient: EventFD, wakeServer: EventFD,
         deadlineNanos: Int64, maxFrames: Int, counters: ClientPortCounters) {
        self.toClient = toClient
        self.fromClient = fromClient
        self.wakeClient = wakeClient
        self.wakeServer = wakeServer
        self.deadlineNanos = deadlineNanos
        self.counters = counters
        scratch = AudioBuffer(channels: toClient.channels, capacity: maxFrames)
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        // Throw away answers to periods that were already bypassed.
        while stale > 0 && fromClient.read(planar: { scratch.channel($0) }, frames: frames) { stale -= 1 }
        if counters.late.load(ordering: .relaxed) {
            if stale > 0 { return } // still behind: pass the audio through untouched
            counters.late.store(false, ordering: .relaxed)
        }
        toClient.write(planar: { UnsafePointer(buffer.channel($0)) }, frames: frames,
                       timestamp: .init(ringPosition: 0, codecFrame: cycle.framePosition, hostNanos: cycle.hostTimeNanos))
        wakeClient.signal()
        let start = monotonicNanoseconds()
        while true {
            if fromClient.read(planar: { buffer.channel($0) }, frames: frames) {
                missesInARow = 0
                return
            }
            let left = deadlineNanos - (monotonicNanoseconds() - start)
            if left <= 0 { break }
            _ = wakeServer.wait(timeoutNanos: left)
        }
        // Missed: the input passes through unprocessed, and the late answer will be discarded.
        stale += 1
        missesInARow += 1
        counters.deadlineMisses.add(1, ordering: .relaxed)
        if missesInARow >= lateAfter { counters.late.store(true, ordering: .relaxed) }
    }
}
