import Atomics

/// Peak and RMS of each channel of a port, written by the audio thread every period while
/// someone reads them (`Engine.watchMeters`) and read by anyone (the console's meters). The peak
/// holds the largest value since it was last read.
public final class PortMeter: @unchecked Sendable {
    public let channels: Int
    private let peaks: [UnsafeAtomic<UInt32>]
    private let rms: [UnsafeAtomic<UInt32>]

    init(channels: Int) {
        self.channels = channels
        peaks = (0..<channels).map { _ in .create(0) }
        rms = (0..<channels).map { _ in .create(0) }
    }

    deinit {
        peaks.forEach { $0.destroy() }
        rms.forEach { $0.destroy() }
    }

    /// Audio side: measures one period of `buffer`.
    @inline(__always)
    func measure(_ buffer: AudioBuffer, frames: Int) {
        for c in 0..<channels {
            let p = buffer.channel(c)
            var peak: Float = 0
            var sum: Float = 0
            for i in 0..<frames {
                let x = p[i]
                peak = max(peak, abs(x))
                sum += x * x
            }
            let held = Float(bitPattern: peaks[c].load(ordering: .relaxed))
            if peak > held { peaks[c].store(peak.bitPattern, ordering: .relaxed) }
            rms[c].store((frames > 0 ? (sum / Float(frames)).squareRoot() : 0).bitPattern, ordering: .relaxed)
        }
    }

    /// Audio side: a period of silence (a port that rests).
    @inline(__always)
    func measureSilence() {
        for c in 0..<channels { rms[c].store(0, ordering: .relaxed) }
    }

    /// The peak of each channel since the last call (then reset), and the last period's RMS,
    /// both as linear amplitudes.
    public func read() -> [(peak: Float, rms: Float)] {
        (0..<channels).map { c in
            (Float(bitPattern: peaks[c].exchange(0, ordering: .relaxed)), Float(bitPattern: rms[c].load(ordering: .relaxed)))
        }
    }
}
