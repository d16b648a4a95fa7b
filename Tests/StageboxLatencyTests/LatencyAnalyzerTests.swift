import Testing
@testable import StageboxLatency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A loop cable simulated offline: the stimulus delayed by whole frames, optionally through the
/// two-tap average (a linear-phase half-frame delay), scaled, and with noise added.
struct SyntheticLoop {
    let stimulus: MultiToneStimulus
    var delay: Int
    var halfFrame = false
    var gain: Float = 1
    var noiseRMS: Float = 0
    private var noise: UInt32 = 0x2545_F491

    init(stimulus: MultiToneStimulus, delay: Int, halfFrame: Bool = false, gain: Float = 1, noiseRMS: Float = 0) {
        self.stimulus = stimulus
        self.delay = delay
        self.halfFrame = halfFrame
        self.gain = gain
        self.noiseRMS = noiseRMS
    }

    /// What is captured while stimulus frame `s` plays.
    mutating func capture(at s: Int64) -> Float {
        let d = Int64(delay)
        var y = stimulus.sample(at: s - d)
        if halfFrame { y = (y + stimulus.sample(at: s - d - 1)) / 2 }
        noise ^= noise << 13; noise ^= noise >> 17; noise ^= noise << 5
        // Uniform in ±√3·rms has an RMS of rms.
        let u = (Float(noise) / Float(UInt32.max) * 2 - 1) * 1.7320508 * noiseRMS
        return gain * y + u
    }

    /// Runs `periods` periods through an accumulator and analyzer, in blocks of `block` frames
    /// starting at stimulus frame `start`; returns the analyzer and every period's estimate.
    mutating func run(periods: Int, start: Int64 = 0, block: Int = 256,
                      settings: AnalyzerSettings = AnalyzerSettings()) -> (LatencyAnalyzer, [PeriodEstimate]) {
        let accumulator = ToneAccumulator(stimulus: stimulus)
        var analyzer = LatencyAnalyzer(stimulus: stimulus, settings: settings)
        var estimates: [PeriodEstimate] = []
        var buffer = [Float](repeating: 0, count: block)
        var s = start
        for _ in 0..<(periods * stimulus.period / block) {
            for i in 0..<block { buffer[i] = capture(at: s + Int64(i)) }
            let done = buffer.withUnsafeBufferPointer { accumulator.feed($0.baseAddress!, frames: block, stimulusFrame: s) }
            if done > 0, let sums = accumulator.takePeriod() { estimates.append(analyzer.add(sums)) }
            s += Int64(block)
        }
        return (analyzer, estimates)
    }
}

@Suite struct LatencyAnalyzerTests {
    let stimulus = MultiToneStimulus()

    @Test(arguments: [(0, false, 0.0), (1, false, 1.0), (37, true, 37.5), (1000, false, 1000.0)])
    func findsTheDelay(whole: Int, half: Bool, expected: Double) {
        var loop = SyntheticLoop(stimulus: stimulus, delay: whole, halfFrame: half)
        let (analyzer, estimates) = loop.run(periods: 6)
        #expect(estimates.count == 6)
        let result = analyzer.result
        #expect(result != nil)
        guard let result else { return }
        #expect(abs(result.delay - expected) <= 0.05, "delay \(result.delay), expected \(expected)")
        #expect(result.polarity == .normal)
        #expect(result.periods == 4)
        #expect(result.errorBound < 0.05)
        print("synthetic delay \(expected): measured \(result.delay) ± \(result.errorBound)")
    }

    @Test(arguments: [(0, false, 0.0), (1, false, 1.0), (37, true, 37.5), (1000, false, 1000.0)])
    func findsAnInvertedLoop(whole: Int, half: Bool, expected: Double) {
        var loop = SyntheticLoop(stimulus: stimulus, delay: whole, halfFrame: half, gain: -0.5)
        let (analyzer, _) = loop.run(periods: 6)
        guard let result = analyzer.result else { Issue.record("no result"); return }
        #expect(abs(result.delay - expected) <= 0.05, "delay \(result.delay), expected \(expected)")
        #expect(result.polarity == .inverted)
        // The half-frame filter also lowers the high tones (by cos(π·f)).
        if !half { #expect(abs(result.gainDB - (-6.02)) < 0.1, "gain \(result.gainDB) dB") }
        print("synthetic inverted delay \(expected): measured \(result.delay) ± \(result.errorBound)")
    }

    /// White noise 30 dB below the stimulus (−42 dBFS RMS), at a loop gain of −20 dB: the
    /// tones stand only about 10 dB above the noise.
    @Test(arguments: [(0, false, 0.0), (1, false, 1.0), (37, true, 37.5), (1000, false, 1000.0)])
    func findsTheDelayInNoise(whole: Int, half: Bool, expected: Double) {
        var loop = SyntheticLoop(stimulus: stimulus, delay: whole, halfFrame: half, gain: 0.1, noiseRMS: 0.0079)
        let (analyzer, estimates) = loop.run(periods: 6)
        guard let result = analyzer.result else { Issue.record("no result"); return }
        #expect(abs(result.delay - expected) <= 0.05, "delay \(result.delay), expected \(expected)")
        #expect(result.polarity == .normal)
        #expect(result.snrDB > 5 && result.snrDB < 15, "snr \(result.snrDB)")
        #expect(estimates.allSatisfy { $0.hasSignal })
        // The bound covers the error actually made.
        #expect(abs(result.delay - expected) <= result.errorBound + 0.01)
        print("synthetic delay \(expected) in noise: measured \(result.delay) ± \(result.errorBound), SNR \(result.snrDB) dB")
    }

    @Test func noSignalIsNoResult() {
        var silent = SyntheticLoop(stimulus: stimulus, delay: 0, gain: 0)
        let (a, e) = silent.run(periods: 3)
        #expect(a.result == nil)
        #expect(e.count == 3 && e.allSatisfy { !$0.hasSignal })

        var noise = SyntheticLoop(stimulus: stimulus, delay: 0, gain: 0, noiseRMS: 0.1)
        let (b, f) = noise.run(periods: 3)
        #expect(b.result == nil)
        #expect(f.allSatisfy { !$0.hasSignal && $0.snrDB < 0 })
    }

    /// Tones barely above the noise (about 1.5 dB): their phases wander by frames, so such
    /// periods are not taken as a measurement at all (once, such a loop gave 163.4 ± 4.8 frames
    /// for a 165-frame loop).
    @Test func tonesBarelyAboveTheNoiseAreNoResult() {
        var loop = SyntheticLoop(stimulus: stimulus, delay: 165, gain: 0.1, noiseRMS: 0.021)
        let (a, e) = loop.run(periods: 6)
        #expect(a.result == nil)
        #expect(e.allSatisfy { !$0.hasSignal }, "\(e.map(\.snrDB))")
        #expect(e.contains { $0.snrDB > 0 }, "\(e.map(\.snrDB))")
    }

    @Test func noSignalTimerTripsAfterItsLimitInARow() {
        var timer = NoSignalTimer(limitFrames: 3 * 48000)
        var tripped: [Bool] = []
        tripped.append(timer.note(hasSignal: false, frames: 16384 * 8)) // 2.73 s
        tripped.append(timer.note(hasSignal: true, frames: 16384))      // the signal came back
        for _ in 0..<8 { tripped.append(timer.note(hasSignal: false, frames: 16384)) }
        #expect(tripped.allSatisfy { !$0 })
        let trips = timer.note(hasSignal: false, frames: 16384)           // 9 periods: 3.07 s
        #expect(trips)
        #expect(timer.quietFrames == 9 * 16384)
    }

    @Test func signalThatGoesAwayStartsTheSettlingAgain() {
        var loop = SyntheticLoop(stimulus: stimulus, delay: 5)
        var settings = AnalyzerSettings()
        settings.history = 2
        let accumulator = ToneAccumulator(stimulus: stimulus)
        var analyzer = LatencyAnalyzer(stimulus: stimulus, settings: settings)
        var buffer = [Float](repeating: 0, count: stimulus.period)
        func period(_ s: Int64, gain: Float) {
            loop.gain = gain
            for i in 0..<stimulus.period { buffer[i] = loop.capture(at: s + Int64(i)) }
            buffer.withUnsafeBufferPointer { _ = accumulator.feed($0.baseAddress!, frames: stimulus.period, stimulusFrame: s) }
            analyzer.add(accumulator.takePeriod()!)
        }
        let n = Int64(stimulus.period)
        for p in 0..<3 { period(n * Int64(p), gain: 1) } // settle, then two
        #expect(analyzer.result != nil)
        period(3 * n, gain: 0)
        #expect(analyzer.result == nil)
        for p in 4..<6 { period(n * Int64(p), gain: 1) } // settle, one
        #expect(analyzer.result == nil)
        period(6 * n, gain: 1)
        #expect(analyzer.result.map { abs($0.delay - 5) < 0.01 } == true)
    }

    /// Any time origin works, blocks of any size, and the frames need not be contiguous.
    @Test func theTimeOriginIsTheStimulusFrame() {
        var loop = SyntheticLoop(stimulus: stimulus, delay: 250, halfFrame: true)
        let (a, _) = loop.run(periods: 6, start: 1_000_000_007, block: 61)
        #expect(a.result.map { abs($0.delay - 250.5) <= 0.05 } == true)
        let (b, _) = loop.run(periods: 6, start: -99_999, block: 4096)
        #expect(b.result.map { abs($0.delay - 250.5) <= 0.05 } == true)

        // A lost block: frames skip ahead, the delay stays.
        let accumulator = ToneAccumulator(stimulus: stimulus)
        var analyzer = LatencyAnalyzer(stimulus: stimulus)
        var buffer = [Float](repeating: 0, count: 512)
        var s: Int64 = 0
        for block in 0..<(7 * stimulus.period / 512) {
            if block % 9 == 4 { s += 512 } // skip one
            for i in 0..<512 { buffer[i] = loop.capture(at: s + Int64(i)) }
            if buffer.withUnsafeBufferPointer({ accumulator.feed($0.baseAddress!, frames: 512, stimulusFrame: s) }) > 0 {
                analyzer.add(accumulator.takePeriod()!)
            }
            s += 512
        }
        #expect(analyzer.result.map { abs($0.delay - 250.5) <= 0.05 } == true)
    }

    /// Delays are found modulo the period: one period and 5 frames reads as 5 frames.
    @Test func delaysWrapAtThePeriod() {
        var loop = SyntheticLoop(stimulus: stimulus, delay: stimulus.period + 5)
        let (a, _) = loop.run(periods: 6)
        #expect(a.result.map { abs($0.delay - 5) <= 0.05 } == true)
        // A slightly early capture stays negative rather than wrapping to nearly a period.
        var early = SyntheticLoop(stimulus: stimulus, delay: -3)
        let (b, _) = early.run(periods: 6)
        #expect(b.result.map { abs($0.delay + 3) <= 0.05 } == true)
    }
}

@Suite struct MultiToneStimulusTests {
    let stimulus = MultiToneStimulus()

    @Test func tonesSitOnWholeBinsFrom200HzTo12kHz() {
        let hz = stimulus.bins.map { Double($0) * 48000 / Double(stimulus.period) }
        #expect(hz.min()! > 200 && hz.max()! < 12000)
        #expect(Set(stimulus.bins).count == stimulus.bins.count)
        // The ladder's pairs, from the base tone.
        #expect(stimulus.bins[1...5].map { $0 - stimulus.bins[0] } == [1, 8, 64, 512, 4000])
        // No tone is a 2nd or 3rd harmonic of another.
        for b in stimulus.bins { #expect(!stimulus.bins.contains(2 * b) && !stimulus.bins.contains(3 * b)) }
    }

    @Test func levelAndCrestFactor() {
        var power = 0.0
        for x in stimulus.samples { power += Double(x) * Double(x) }
        let rmsDB = 10 * log10(power / Double(stimulus.period))
        #expect(abs(rmsDB - -12) < 0.01)
        let crest = stimulus.crestFactor
        #expect(crest < 3.1, "crest factor \(crest)")
        #expect(stimulus.samples.allSatisfy { abs($0) < 0.794 }) // −2 dBFS
        print("stimulus crest factor \(crest), peak \(20 * log10(crest) - 12) dBFS")
    }

    @Test func fillRepeatsThePeriod() {
        var out = [Float](repeating: 0, count: 10)
        out.withUnsafeMutableBufferPointer { stimulus.fill($0.baseAddress!, frames: 5, from: Int64(stimulus.period) - 2, stride: 2) }
        let expected = [stimulus.period - 2, stimulus.period - 1, 0, 1, 2].map { stimulus.samples[$0] }
        #expect(stride(from: 0, to: 10, by: 2).map { out[$0] } == expected)
        #expect(out[1] == 0)
        #expect(stimulus.sample(at: -1) == stimulus.samples[stimulus.period - 1])
    }
}
