import StageboxEngine

/// A sender that puts out a constant on every channel.
final class ConstantSender: PortProcessor, @unchecked Sendable {
    let value: Float
    init(_ value: Float) { self.value = value }
    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        for c in 0..<buffer.channels { buffer.channel(c).update(repeating: value, count: frames) }
    }
}

/// A filter that multiplies by a gain, in place.
final class GainFilter: PortProcessor, @unchecked Sendable {
    let gain: Float
    private(set) var calls = 0
    init(_ gain: Float) { self.gain = gain }
    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        calls += 1
        for c in 0..<buffer.channels {
            let p = buffer.channel(c)
            for i in 0..<frames { p[i] *= gain }
        }
    }
}

/// A receiver that keeps the last period it got.
final class CapturingReceiver: PortProcessor, @unchecked Sendable {
    private(set) var last: [[Float]] = []
    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        last = (0..<buffer.channels).map { Array(UnsafeBufferPointer(start: buffer.channel($0), count: frames)) }
    }
}

struct EngineHarness {
    let engine: Engine
    let frames: Int
    var position: Int64 = 0

    init(inputs: Int = 2, outputs: Int = 2, frames: Int = 64, tone: ToneSignal = .silence) {
        engine = Engine(settings: EngineSettings(sampleRate: 48000, period: frames, inputs: inputs,
                                                 outputs: outputs, toneSignal: tone))
        self.frames = frames
    }

    /// Fills codec.in channel c with `input(c, i)`, runs one period, returns codec.out's channels.
    @discardableResult
    mutating func period(_ input: (Int, Int) -> Float = { _, _ in 0 }) -> [[Float]] {
        let capture = engine.captureBuffer
        for c in 0..<capture.channels {
            for i in 0..<frames { capture.channel(c)[i] = input(c, i) }
        }
        engine.process(frames: frames, cycle: CycleInfo(framePosition: position, hostTimeNanos: 0, sampleRate: 48000))
        position += Int64(frames)
        let out = engine.playbackBuffer
        return (0..<out.channels).map { Array(UnsafeBufferPointer(start: out.channel($0), count: frames)) }
    }
}
