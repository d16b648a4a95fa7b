#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The meter's test signal: a sum of sines that repeats exactly every `period` frames.
///
/// Every tone sits on a whole bin of the period (it completes a whole number of cycles in it),
/// so a DFT over any `period` consecutive frames sees each tone alone, with no leakage from the
/// others, whatever the offset. The bins are chosen as a Vernier ladder: pairs of tones 1, 8,
/// 64, 512 and 4000 bins apart (see `LatencyAnalyzer`), plus three tones that only help the
/// final fit. None is a 2nd or 3rd harmonic, or a low-order sum or difference, of the others, so
/// a codec's mild distortion does not land on a tone.
public struct MultiToneStimulus: Sendable {
    /// Frames per period: a power of two (the DFT indexes its table with a mask). The meter
    /// resolves delays modulo this (341 ms at 48 kHz for the default).
    public let period: Int
    /// Bins of the tones (cycles per period).
    public let bins: [Int]
    /// Each tone's phase at frame 0, radians.
    public let phases: [Double]
    /// Each tone's amplitude (all equal).
    public let amplitude: Double
    /// The signal itself, one period.
    public let samples: [Float]

    /// The base bin of the ladder: about 205 Hz at 48 kHz with the default period.
    public static let baseBin = 70
    /// The bin offsets from `baseBin`: the ladder (0, 1, 8, 64, 512, 4000) and three fit tones.
    public static let offsets = [0, 1, 8, 64, 512, 4000, 960, 1980, 3000]

    /// Phases that keep the tones from peaking together, so the signal can be loud (a good
    /// SNR) without clipping: found once by a random search refined in 5° steps, for a crest
    /// factor of 3.08 (9.8 dB). Schroeder's phases, made for evenly spaced tones, give 3.65 here.
    /// They suit these bins only; the tests check the crest factor.
    static let lowCrestPhases = [0.52, 2.79, 1.75, 2.97, 1.05, 3.39, 2.18, 4.1, 3.34]

    /// - Parameters:
    ///   - period: frames per period, a power of two from 8192 (the widest pair ends at
    ///     bin 4070, which must stay below half the period) to 1 << 20.
    ///   - levelDB: the RMS level of the whole signal, dBFS. At the default −12 dBFS the
    ///     peak stays below −2 dBFS (see the tests for its crest factor).
    public init(period: Int = 16384, levelDB: Double = -12) {
        precondition(period >= 8192 && period <= 1 << 20 && period & (period - 1) == 0,
                     "the stimulus period must be a power of two from 8192 to 2^20")
        self.period = period
        bins = Self.offsets.map { Self.baseBin + $0 }
        let m = bins.count
        phases = Self.lowCrestPhases
        // Each tone's power is a²/2; M of them make the RMS level asked for.
        amplitude = pow(10, levelDB / 20) * (2 / Double(m)).squareRoot()
        var out = [Float](repeating: 0, count: period)
        for (bin, phase) in zip(bins, phases) {
            for n in 0..<period {
                // The index product stays exact: n × bin wraps at the period first.
                let k = (n * bin) & (period - 1)
                out[n] += Float(amplitude * cos(2 * Double.pi * Double(k) / Double(period) + phase))
            }
        }
        samples = out
    }

    /// The sample at stimulus frame `frame` (any integer: the signal repeats).
    @inline(__always)
    public func sample(at frame: Int64) -> Float {
        samples[Int(frame & Int64(period - 1))]
    }

    /// Writes `frames` frames starting at stimulus frame `first` into `out`, `stride` floats apart.
    /// Allocation-free: for a process callback.
    public func fill(_ out: UnsafeMutablePointer<Float>, frames: Int, from first: Int64, stride: Int = 1) {
        let mask = Int64(period - 1)
        samples.withUnsafeBufferPointer { s in
            for i in 0..<frames { out[i * stride] = s[Int((first &+ Int64(i)) & mask)] }
        }
    }

    /// The peak over the RMS of one period.
    public var crestFactor: Double {
        var peak = 0.0, power = 0.0
        for x in samples {
            peak = max(peak, Double(abs(x)))
            power += Double(x) * Double(x)
        }
        return peak / (power / Double(period)).squareRoot()
    }
}
