import Synchronization

/// The codec outputs' fade: a linear ramp of the master gain, in at every start and out before
/// every suspend and stop, so that the outputs never step from silence to signal or back.
///
/// The control side says where the gain should go (`fadeIn`, `fadeOut`); the audio thread moves
/// it a step per frame and says when it has arrived. A fade of 0 ms switches at once (offline
/// renders and bit-exact measurements).
public final class OutputFade: Sendable {
    /// The gain change per frame (1: no fade).
    public let step: Float
    /// Where the gain goes: 1 (sound) or 0 (silence). Control side writes, audio side reads.
    private let towardsSound = Atomic<Bool>(true)
    /// The gain now, as the audio thread left it after its last period (as Float bits).
    private let gainBits = Atomic<UInt32>(Float(0).bitPattern)
    /// Set by the control side to start the next period from silence (a restart).
    private let fromSilence = Atomic<Bool>(true)

    /// - Parameters:
    ///   - milliseconds: the length of a whole fade (0: none).
    public init(milliseconds: Double, sampleRate: Int) {
        let frames = milliseconds * Double(sampleRate) / 1000
        step = frames >= 1 ? Float(1 / frames) : 1
    }

    /// Fades in from silence: at the start of the streams, after a resume or a restart.
    public func fadeInFromSilence() {
        fromSilence.store(true, ordering: .relaxed)
        gainBits.store(Float(0).bitPattern, ordering: .relaxed)
        towardsSound.store(true, ordering: .releasing)
    }

    /// Fades back in from wherever the gain is (a fade-out turned back halfway).
    public func fadeIn() { towardsSound.store(true, ordering: .releasing) }

    /// Fades out to silence (before a suspend or a stop).
    public func fadeOut() { towardsSound.store(false, ordering: .releasing) }

    /// The gain after the last period processed.
    public var gain: Float { Float(bitPattern: gainBits.load(ordering: .acquiring)) }

    /// Whether a fade-out has reached silence: the streams may stop without a click.
    public var isSilent: Bool { !towardsSound.load(ordering: .relaxed) && gain == 0 }

    /// Whether the outputs are fading in (a fade of 0 ms never is): clients' senders wait, so
    /// that their first frames play after the fade-in, at full level, and none is lost.
    public var isFadingIn: Bool { step < 1 && towardsSound.load(ordering: .relaxed) && gain < 1 }

    /// Whether the outputs are at full gain.
    public var isOpen: Bool { towardsSound.load(ordering: .relaxed) && gain == 1 }

    /// Audio side: ramps the first `frames` frames of `buffer` from the current gain toward
    /// the target, one step per frame. Allocates nothing.
    @inline(__always)
    func apply(to buffer: AudioBuffer, frames: Int) {
        var gain = Float(bitPattern: gainBits.load(ordering: .relaxed))
        if fromSilence.load(ordering: .relaxed) {
            fromSilence.store(false, ordering: .relaxed)
            gain = 0
        }
        let target: Float = towardsSound.load(ordering: .acquiring) ? 1 : 0
        if gain == target {
            if target == 0 { buffer.clear(frames: frames) }
            return
        }
        let step = target > gain ? self.step : -self.step
        // Within half a step of the target counts as there: a sum of float steps falls short.
        let half = self.step / 2
        for i in 0..<frames {
            gain += step
            if step > 0 ? gain >= target - half : gain <= target + half { gain = target }
            for c in 0..<buffer.channels { buffer.channel(c)[i] *= gain }
        }
        gainBits.store(gain.bitPattern, ordering: .releasing)
    }
}
