#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The test signal of the `tone` port.
public enum ToneSignal: String, Sendable, CaseIterable {
    case sine, noise, silence
}

/// Generates a sine at a frequency and level, white noise, or silence.
/// Deterministic: the noise comes from a fixed seed.
// @unchecked: the phase and the noise state are touched only by `process`, on the audio thread
// (or the one thread of an offline render); the rest is immutable.
public final class ToneGenerator: PortProcessor, @unchecked Sendable {
    private let signal: ToneSignal
    private let amplitude: Float
    private let stepCos: Double
    private let stepSin: Double
    /// The sine's phasor (cos, sin of its phase), carried from period to period.
    private var re: Double = 1
    private var im: Double = 0
    private var noiseState: UInt32 = 0x9E37_79B9

    public init(signal: ToneSignal, frequency: Double, levelDB: Double, sampleRate: Int) {
        self.signal = signal
        self.amplitude = Float(pow(10, levelDB / 20))
        let phaseStep = 2 * Double.pi * frequency / Double(sampleRate)
        stepCos = cos(phaseStep)
        stepSin = sin(phaseStep)
    }

    /// Nobody connected to the tone: nothing to compute (it picks up where it left off).
    public var restsWhenUnheard: Bool { true }

    public func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        let out = buffer.channel(0)
        switch signal {
        case .silence:
            out.update(repeating: 0, count: frames)
        case .sine:
            // A rotating phasor: four multiplications a sample instead of a sine, and no call
            // into libm at all (a cold sine costs the simulated board more than its period's
            // work). Set back to length 1 every period, its rounding cannot build up in level;
            // in phase it drifts by about 1e-16 rad a sample, a random walk: microradians a year.
            var re = self.re, im = self.im
            for i in 0..<frames {
                out[i] = amplitude * Float(im)
                (re, im) = (re * stepCos - im * stepSin, im * stepCos + re * stepSin)
            }
            let length = (re * re + im * im).squareRoot()
            self.re = re / length
            self.im = im / length
        case .noise:
            for i in 0..<frames {
                // xorshift32: cheap, allocation-free and the same on every run.
                noiseState ^= noiseState << 13
                noiseState ^= noiseState >> 17
                noiseState ^= noiseState << 5
                out[i] = amplitude * (Float(noiseState) / Float(UInt32.max) * 2 - 1)
            }
        }
        for c in 1..<max(1, buffer.channels) { buffer.channel(c).update(from: out, count: frames) }
    }
}
