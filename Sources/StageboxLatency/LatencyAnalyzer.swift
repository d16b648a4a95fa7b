import DequeModule
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether the loop passes the signal as it is or turns it upside down.
public enum Polarity: String, Sendable {
    case normal, inverted
}

/// What one period of captured signal says about the loop.
public struct PeriodEstimate: Sendable {
    /// The delay in frames, from −period/64 up to period − period/64: delays are found modulo
    /// the stimulus period, and a slightly negative figure is kept negative, not wrapped.
    public var delay: Double
    public var polarity: Polarity
    /// How far the tones disagree with a pure delay: the RMS (weighted as the fit is) of the
    /// delays each tone alone gives about the fitted one, frames.
    public var fitResidual: Double
    /// The received tones' RMS level, dBFS.
    public var levelDB: Double
    /// The received tones against the stimulus's: the loop's gain, dB.
    public var gainDB: Double
    /// The tones' power against everything else in the period (noise, hum, distortion), dB.
    public var snrDB: Double
    /// Whether the tones are there at all (`AnalyzerSettings`): without them the delay means nothing.
    public var hasSignal: Bool
}

/// The meter's figure over the last few periods.
public struct LatencyResult: Sendable {
    /// The mean of the last periods' delays, frames.
    public var delay: Double
    /// The polarity most of them found.
    public var polarity: Polarity
    /// The error bound, frames: half the range of the periods' delays (how much the figure
    /// moved while it was measured) plus the largest fit residual among them (how far the loop
    /// is from a pure delay). A stable, clean loop makes it thousandths of a frame; it is an
    /// honest scale of the uncertainty, not a statistical guarantee.
    public var errorBound: Double
    /// Half the range of the periods' delays, frames.
    public var spread: Double
    /// The largest of the periods' fit residuals, frames.
    public var fitResidual: Double
    public var levelDB: Double
    public var gainDB: Double
    /// The lowest of the periods' SNRs, dB.
    public var snrDB: Double
    /// How many periods the figure is over.
    public var periods: Int
}

/// When the tones count as present.
public struct AnalyzerSettings: Sendable {
    /// The loop's gain at the tones must be above this, dB.
    public var minimumGainDB = -70.0
    /// The tones must stand this far above the rest of the captured signal, dB. Below about
    /// 3 dB the phases wander by more than a frame: such a period is not a measurement.
    public var minimumSNRDB = 3.0
    /// Periods with signal left out at the start (and after the signal went): the first one
    /// usually holds the silence before the stimulus arrived.
    public var settlePeriods = 1
    /// How many periods the result is over.
    public var history = 4

    public init() {}
}

/// Turns each period's tone sums into a delay, and keeps the last few for the result.
///
/// The delay comes from phase differences between tone pairs, which do not depend on the
/// polarity. A pair `s` bins apart turns by 2π·s·D/N over a delay of D frames, so it tells D
/// modulo N/s. The pair 1 bin apart gives D modulo the whole period; each wider pair (8, 64,
/// 512, 4000 bins) picks, of its N/s-periodic candidates, the one nearest the coarser estimate,
/// and so refines it eightfold, until the widest pair resolves a small fraction of a frame. A
/// weighted fit of all tones' phases around that figure gives the final delay, and what is
/// left of the absolute phase (near 0 or near π) gives the polarity.
public struct LatencyAnalyzer: Sendable {
    public let stimulus: MultiToneStimulus
    public let settings: AnalyzerSettings
    private var recent: Deque<PeriodEstimate> = []
    private var settled = 0

    public init(stimulus: MultiToneStimulus, settings: AnalyzerSettings = AnalyzerSettings()) {
        self.stimulus = stimulus
        self.settings = settings
    }

    /// Analyses one period and keeps it for the result (unless it has no signal, which starts
    /// the settling again, or is one of the settling periods).
    @discardableResult
    public mutating func add(_ sums: ToneSums) -> PeriodEstimate {
        let e = estimate(sums)
        if !e.hasSignal {
            recent.removeAll()
            settled = 0
        } else if settled < settings.settlePeriods {
            settled += 1
        } else {
            recent.append(e)
            if recent.count > settings.history { recent.removeFirst() }
        }
        return e
    }

    /// The figure over the last periods kept, once there are `history` of them.
    public var result: LatencyResult? {
        guard recent.count >= settings.history, let last = recent.last else { return nil }
        let n = stimulus.period
        // Relative to the latest, so periods on both sides of the wrap average right.
        let delays = recent.map { last.delay + wrapped($0.delay - last.delay, period: Double(n)) }
        let mean = delays.reduce(0, +) / Double(delays.count)
        let spread = ((delays.max() ?? mean) - (delays.min() ?? mean)) / 2
        let residual = recent.map(\.fitResidual).max() ?? 0
        let inverted = recent.filter { $0.polarity == .inverted }.count
        return LatencyResult(
            delay: mean, polarity: 2 * inverted > recent.count ? .inverted : .normal,
            errorBound: spread + residual, spread: spread, fitResidual: residual,
            levelDB: recent.map(\.levelDB).reduce(0, +) / Double(recent.count),
            gainDB: recent.map(\.gainDB).reduce(0, +) / Double(recent.count),
            snrDB: recent.map(\.snrDB).min() ?? last.snrDB, periods: recent.count)
    }

    /// One period on its own.
    public func estimate(_ sums: ToneSums) -> PeriodEstimate {
        let n = Double(stimulus.period)
        let bins = stimulus.bins
        let m = bins.count
        let half = stimulus.amplitude * n / 2 // |X| of a tone received at unity gain
        var phase = [Double](repeating: 0, count: m)
        var magnitude = [Double](repeating: 0, count: m)
        var tonePower = 0.0
        for t in 0..<m {
            let re = sums.real[t], im = sums.imaginary[t]
            magnitude[t] = (re * re + im * im).squareRoot()
            // The received phase less the one sent: −2π·bin·D/N, plus π when inverted.
            phase[t] = wrapped(atan2(im, re) - stimulus.phases[t], period: 2 * .pi)
            let a = 2 * magnitude[t] / n
            tonePower += a * a / 2
        }
        let total = sums.energy / n
        let sent = Double(m) * stimulus.amplitude * stimulus.amplitude / 2
        let noise = max(total - tonePower, total * 1e-15, 1e-30)
        let levelDB = 10 * log10(max(tonePower, 1e-30))
        let gainDB = 10 * log10(max(tonePower, 1e-30) / sent)
        let snrDB = 10 * log10(max(tonePower, 1e-30) / noise)
        let hasSignal = gainDB > settings.minimumGainDB && snrDB > settings.minimumSNRDB
            && magnitude.allSatisfy { $0 > half * 1e-6 }

        // The ladder: tone 0 against tones 1…5, each pair wider than the last.
        var delay = 0.0
        for j in 1...5 {
            let s = Double(bins[j] - bins[0])
            let turn = wrapped(phase[j] - phase[0], period: 2 * .pi)
            let span = n / s // the pair repeats every span frames of delay
            let base = wrapped(-turn * n / (2 * .pi * s), period: span, from: 0)
            delay = j == 1 ? base : base + (((delay - base) / span).rounded()) * span
        }
        // The fit: each tone's phase left over after the ladder's delay, less the polarity's 0
        // or π, is what the delay still owes; weighted by bin² (a wide lever) and power.
        var sumX = 0.0, sumY = 0.0
        for t in 0..<m {
            let r = phase[t] + 2 * .pi * Double(bins[t]) * delay / n
            sumX += magnitude[t] * cos(r)
            sumY += magnitude[t] * sin(r)
        }
        let inverted = abs(atan2(sumY, sumX)) > .pi / 2
        var weights = 0.0, weighted = 0.0
        var each = [Double](repeating: 0, count: m)
        var weight = [Double](repeating: 0, count: m)
        for t in 0..<m {
            let k = Double(bins[t])
            let r = wrapped(phase[t] + 2 * .pi * k * delay / n - (inverted ? .pi : 0), period: 2 * .pi)
            each[t] = -r * n / (2 * .pi * k)
            weight[t] = k * k * magnitude[t] * magnitude[t]
            weights += weight[t]
            weighted += weight[t] * each[t]
        }
        let correction = weights > 0 ? weighted / weights : 0
        var spread = 0.0
        for t in 0..<m { spread += weight[t] * (each[t] - correction) * (each[t] - correction) }
        let residual = weights > 0 ? (spread / weights).squareRoot() : 0
        let found = wrapped(delay + correction, period: n, from: -n / 64)
        return PeriodEstimate(delay: found, polarity: inverted ? .inverted : .normal, fitResidual: residual,
                              levelDB: levelDB, gainDB: gainDB, snrDB: snrDB, hasSignal: hasSignal)
    }
}

/// `x` moved by whole periods into [from, from + period); with no `from`, into [−period/2, period/2).
func wrapped(_ x: Double, period: Double, from: Double? = nil) -> Double {
    let low = from ?? -period / 2
    var y = (x - low).truncatingRemainder(dividingBy: period)
    if y < 0 { y += period }
    return low + y
}

/// Counts how long the tones have been missing, in frames, and says when that is too long.
public struct NoSignalTimer: Sendable {
    /// Frames without signal after which the meter gives up.
    public let limit: Int
    public private(set) var quietFrames = 0

    public init(limitFrames: Int) { limit = max(1, limitFrames) }

    /// Notes `frames` frames with or without signal; true once the signal has been missing for
    /// `limit` frames in a row.
    public mutating func note(hasSignal: Bool, frames: Int) -> Bool {
        quietFrames = hasSignal ? 0 : quietFrames + frames
        return quietFrames >= limit
    }
}
