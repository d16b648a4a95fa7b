#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One period's DFT of the captured signal at the stimulus's tone bins, and its energy.
public struct ToneSums: Sendable, Equatable {
    /// Σ y[n]·cos(2π·bin·s/N) and −Σ y[n]·sin(2π·bin·s/N) per tone, where s is the stimulus
    /// frame each captured frame lines up with (see `ToneAccumulator.feed`).
    public var real: [Double]
    public var imaginary: [Double]
    /// Σ y[n]² over the period.
    public var energy: Double
    /// Frames summed (the stimulus period).
    public var frames: Int

    public init(real: [Double], imaginary: [Double], energy: Double, frames: Int) {
        self.real = real
        self.imaginary = imaginary
        self.energy = energy
        self.frames = frames
    }
}

/// Sums what comes back, frame by frame, into a DFT at the stimulus's tone bins only:
/// O(tones) per frame, no FFT. A period is complete after `period` frames, whatever frame they
/// started at: the stimulus repeats, so any `period` consecutive frames hold each tone whole.
///
/// `feed` allocates nothing, takes no lock and makes no system call. Not Sendable: one thread
/// feeds it and takes its periods.
public final class ToneAccumulator {
    public let stimulus: MultiToneStimulus
    private let tones: Int
    private let mask: Int
    /// cos and sin of 2π·i/N for i in 0..<N: the phasor of any bin at any frame is one of them.
    private let cosine: UnsafeMutablePointer<Double>
    private let sine: UnsafeMutablePointer<Double>
    private let bins: UnsafeMutablePointer<Int>
    /// Each tone's table index for the next frame (bin × s mod N).
    private let index: UnsafeMutablePointer<Int>
    private let real: UnsafeMutablePointer<Double>
    private let imaginary: UnsafeMutablePointer<Double>
    private var energy = 0.0
    private var summed = 0
    /// The stimulus frame the next captured frame is expected to line up with (nil: unknown).
    private var nextFrame: Int64?
    /// The last complete period, copied out by `takePeriod`.
    private let doneReal: UnsafeMutablePointer<Double>
    private let doneImaginary: UnsafeMutablePointer<Double>
    private var doneEnergy = 0.0
    private var hasDone = false

    public init(stimulus: MultiToneStimulus) {
        self.stimulus = stimulus
        let n = stimulus.period
        tones = stimulus.bins.count
        mask = n - 1
        cosine = .allocate(capacity: n)
        sine = .allocate(capacity: n)
        for i in 0..<n {
            let a = 2 * Double.pi * Double(i) / Double(n)
            cosine[i] = cos(a)
            sine[i] = sin(a)
        }
        bins = .allocate(capacity: tones)
        for (i, b) in stimulus.bins.enumerated() { bins[i] = b }
        index = .allocate(capacity: tones)
        index.initialize(repeating: 0, count: tones)
        real = .allocate(capacity: tones)
        real.initialize(repeating: 0, count: tones)
        imaginary = .allocate(capacity: tones)
        imaginary.initialize(repeating: 0, count: tones)
        doneReal = .allocate(capacity: tones)
        doneReal.initialize(repeating: 0, count: tones)
        doneImaginary = .allocate(capacity: tones)
        doneImaginary.initialize(repeating: 0, count: tones)
    }

    deinit {
        for p in [cosine, sine, real, imaginary, doneReal, doneImaginary] { p.deallocate() }
        bins.deallocate()
        index.deallocate()
    }

    /// Adds `frames` captured samples (`stride` floats apart). `stimulusFrame` is the stimulus
    /// frame that was being played at the moment the first of them was captured, on the same
    /// clock: the delay found is then the time from playing a frame to capturing it.
    ///
    /// Returns how many periods completed in this call (their sums: `takePeriod`; only the
    /// last is kept). Frames need not be contiguous: a jump in `stimulusFrame` (a lost block)
    /// is fine as long as the loop's delay is the same on both sides of it.
    @discardableResult
    public func feed(_ samples: UnsafePointer<Float>, frames: Int, stride: Int = 1, stimulusFrame: Int64) -> Int {
        guard frames > 0 else { return 0 }
        if nextFrame != stimulusFrame {
            let s = Int(stimulusFrame & Int64(mask))
            for t in 0..<tones { index[t] = (bins[t] &* s) & mask }
        }
        var completed = 0
        var i = 0
        while i < frames {
            let chunk = min(frames - i, stimulus.period - summed)
            for n in i..<(i + chunk) {
                let y = Double(samples[n * stride])
                energy += y * y
                for t in 0..<tones {
                    let k = index[t]
                    real[t] += y * cosine[k]
                    imaginary[t] -= y * sine[k]
                    index[t] = (k &+ bins[t]) & mask
                }
            }
            summed += chunk
            i += chunk
            if summed == stimulus.period {
                doneReal.update(from: real, count: tones)
                doneImaginary.update(from: imaginary, count: tones)
                doneEnergy = energy
                hasDone = true
                real.update(repeating: 0, count: tones)
                imaginary.update(repeating: 0, count: tones)
                energy = 0
                summed = 0
                completed += 1
            }
        }
        nextFrame = stimulusFrame &+ Int64(frames)
        return completed
    }

    /// The last complete period's sums, once (nil when none completed since the last call).
    /// Allocates: call it off the audio path.
    public func takePeriod() -> ToneSums? {
        guard hasDone else { return nil }
        hasDone = false
        return ToneSums(real: Array(UnsafeBufferPointer(start: doneReal, count: tones)),
                        imaginary: Array(UnsafeBufferPointer(start: doneImaginary, count: tones)),
                        energy: doneEnergy, frames: stimulus.period)
    }

    /// Starts a new period: what was summed so far is dropped (after the loop changed).
    public func restart() {
        real.update(repeating: 0, count: tones)
        imaginary.update(repeating: 0, count: tones)
        energy = 0
        summed = 0
        hasDone = false
    }
}
