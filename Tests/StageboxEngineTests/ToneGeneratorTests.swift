#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageboxTestSupport
import Testing
@testable import StageboxEngine

@Suite struct ToneGeneratorTests {
    /// The phasor carried from period to period stays on the true sine, in level and phase,
    /// over an hour of 48 kHz audio (six minutes under qemu-user): 440 Hz repeats every 1,200
    /// frames (11 cycles), so the exact value of frame n is the sine of (n mod 1200).
    @Test func theSineStaysOnTheTrueSineForAnHour() {
        let rate = 48000, period = 4800
        let tone = ToneGenerator(signal: .sine, frequency: 440, levelDB: 0, sampleRate: rate)
        let buffer = AudioBuffer(channels: 1, capacity: period)
        let cycle = CycleInfo(framePosition: 0, hostTimeNanos: 0, sampleRate: rate)
        var worst: Float = 0
        var n = 0
        for _ in 0..<Emulation.scaled(3600 * rate / period) {
            tone.process(buffer, frames: period, cycle: cycle)
            let out = buffer.channel(0)
            // Every period's first and last frames: enough to see level or phase wander.
            for i in [0, period / 2, period - 1] {
                let exact = Float(sin(2 * Double.pi * 440 * Double((n + i) % 1200) / Double(rate)))
                worst = max(worst, abs(out[i] - exact))
            }
            n += period
        }
        #expect(worst < 1e-6, "the phasor drifted \(worst) from the true sine")
    }

    /// A period of any length continues the last one's sine without a jump.
    @Test func periodsOfAnyLengthJoinWithoutAJump() {
        let tone = ToneGenerator(signal: .sine, frequency: 1000, levelDB: -6, sampleRate: 48000)
        let buffer = AudioBuffer(channels: 2, capacity: 256)
        let cycle = CycleInfo(framePosition: 0, hostTimeNanos: 0, sampleRate: 48000)
        let amplitude = Float(pow(10, -6.0 / 20))
        var n = 0
        for frames in [64, 1, 255, 17, 256, 128] {
            tone.process(buffer, frames: frames, cycle: cycle)
            for i in 0..<frames {
                let exact = amplitude * Float(sin(2 * Double.pi * 1000 * Double(n + i) / 48000))
                #expect(abs(buffer.channel(0)[i] - exact) < 1e-6)
                #expect(buffer.channel(1)[i] == buffer.channel(0)[i], "every channel the same")
            }
            n += frames
        }
    }
}
