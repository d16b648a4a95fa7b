import StageboxEngine
import StageboxRealtime
import Synchronization

/// The audio thread's part of the recorder: a receiver port fed from one source, which copies
/// each period into a lock-free ring while its gate is open. It never waits: a period that does
/// not fit (the disk stalled longer than the ring holds) is dropped whole and counted.
final class RecorderTap: PortProcessor, @unchecked Sendable {
    // @unchecked: `ring` is a single-producer single-consumer ring (this processor produces, the
    // writer thread consumes); everything else is atomic.
    let source: String
    let portName: String
    let ring: SampleRing
    /// Whether periods go into the ring; the writer thread opens and closes it.
    let open = Atomic<Bool>(false)
    /// The gate as the audio thread last saw it, so the writer knows when a close took effect.
    let seenOpen = Atomic<Bool>(false)
    /// Frames dropped because the ring was full, ever.
    let droppedFrames = Atomic<Int>(0)
    /// The codec time of the first frame that went into the ring after the gate opened (0: none
    /// yet); the writer clears it when it opens the gate.
    let firstFrameNanos = Atomic<Int64>(0)

    init(source: String, channels: Int, capacityFrames: Int) {
        self.source = source
        portName = "stagebox.record.\(source)"
        ring = SampleRing(channels: channels, capacityFrames: capacityFrames)
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        let isOpen = open.load(ordering: .acquiring)
        if isOpen {
            if ring.write(frames: frames, channel: { UnsafePointer(buffer.channel($0)) }) {
                if firstFrameNanos.load(ordering: .relaxed) == 0 {
                    firstFrameNanos.store(cycle.hostTimeNanos, ordering: .relaxed)
                }
            } else {
                droppedFrames.add(frames, ordering: .relaxed)
            }
        }
        seenOpen.store(isOpen, ordering: .releasing)
    }
}
