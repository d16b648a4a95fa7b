import StageboxEngine
import StageboxRealtime
import Synchronization

/// The audio thread's part of the recorder: a receiver port connected to one source, which
/// copies the source's periods into a lock-free ring while its gate is open. It never waits: a
/// period that does not fit (the disk stalled longer than the ring holds) is dropped whole and
/// counted.
///
/// It takes its source apart (`SeparateInputsProcessor`) to see the connection itself: a take
/// begins only once the connection is steady, never inside the one-period fade-in of a
/// connection just made, so the take's first sample is the source's, unscaled.
final class RecorderTap: SeparateInputsProcessor, @unchecked Sendable {
    // @unchecked: `ring` is a single-producer single-consumer ring (this processor produces, the
    // writer thread consumes); `writing` is the audio thread's alone; everything else is atomic.
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
    /// Audio thread: whether this opening of the gate has written its first period.
    private var writing = false

    init(source: String, channels: Int, capacityFrames: Int) {
        self.source = source
        portName = Self.portName(for: source)
        ring = SampleRing(channels: channels, capacityFrames: capacityFrames)
    }

    static func portName(for source: String) -> String { "stagebox.record.\(source)" }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {}

    func process(inputs: [PortInput], frames: Int, cycle: CycleInfo) {
        let isOpen = open.load(ordering: .acquiring)
        defer { seenOpen.store(isOpen, ordering: .releasing) }
        guard isOpen else {
            writing = false
            return
        }
        guard inputs.count == 1 else { return } // the source left (or is not connected yet)
        let input = inputs[0]
        if !writing {
            guard input.startGain == 1 && input.endGain == 1 else { return } // still fading in
            writing = true
        }
        let source = input.source.buffer
        let channels = ring.channels
        guard source.channels >= channels else { return }
        if ring.write(frames: frames, channel: { UnsafePointer(source.channel($0)) }) {
            if firstFrameNanos.load(ordering: .relaxed) == 0 {
                firstFrameNanos.store(cycle.hostTimeNanos, ordering: .relaxed)
            }
        } else {
            droppedFrames.add(frames, ordering: .relaxed)
        }
    }
}
