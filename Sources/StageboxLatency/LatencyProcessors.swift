import StageboxEngine
import StageboxRealtime

/// Audio thread: plays the stimulus, frame n of the codec clock being stimulus frame n.
public final class StimulusPlayer: PortProcessor, @unchecked Sendable {
    // @unchecked: the stimulus is immutable; only the audio thread calls `process`.
    let stimulus: MultiToneStimulus
    public init(stimulus: MultiToneStimulus) { self.stimulus = stimulus }

    public func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        stimulus.fill(buffer.channel(0), frames: frames, from: cycle.framePosition)
    }
}

/// Audio thread: hands each period captured, with its codec frame, to the control thread.
/// A period that does not fit is dropped whole (the meter allows gaps).
public final class CaptureTap: PortProcessor, @unchecked Sendable {
    // @unchecked: a single-producer single-consumer pair (the audio thread in, the control
    // thread out), both lock-free; nothing else is shared.
    let samples: SampleRing
    let blocks: SPSCQueue<(position: Int64, frames: Int)>

    public init(capacity: Int) {
        samples = SampleRing(channels: 1, capacityFrames: capacity)
        blocks = SPSCQueue(capacity: capacity)
    }

    public func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        if samples.write(frames: frames, channel: { _ in UnsafePointer(buffer.channel(0)) }) {
            blocks.push((cycle.framePosition, frames))
        }
    }

    /// Control thread: the next period, copied into `scratch`.
    public func take(into scratch: inout [Float]) -> (Int64, Int)? {
        guard let block = blocks.pop() else { return nil }
        if scratch.count < block.frames { scratch = [Float](repeating: 0, count: block.frames) }
        let got = scratch.withUnsafeMutableBufferPointer { samples.read(into: $0.baseAddress!, maxFrames: block.frames) }
        return (block.position, got)
    }
}
