import CALSA
import StageboxEngine
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starting the streams, and what the loop does when one stops: the codec loop's path out of
/// the steady state, kept apart from the period's own path in `ALSADriver.swift`.
extension ALSADriver {
    /// Pre-fills playback with a whole buffer of silence and starts both streams together.
    func start(_ cap: PCMDevice?, _ play: PCMDevice, _ s: inout LoopState) -> ALSAError? {
        // Every start (the first, a resume, a restart after an xrun) fades the outputs in.
        engine.outputFade.fadeInFromSilence()
        if let cap { snd_pcm_prepare(cap.handle) }
        // Playback too, even when linked (the capture's prepare already prepared it in the
        // kernel): where the control record cannot be mmapped (arm64, ARM), alsa-lib keeps
        // each handle's pointers in a copy that only that handle's own calls refresh. Skipped,
        // the pre-fill below would write at the stale pointer and push it back to the kernel:
        // after its first xrun the loop stood still (found on aarch64; on x86_64 alsa-lib's
        // `sync_ptr_ioctl` option shows it too).
        snd_pcm_prepare(play.handle)
        let filled = play.writeSilence(frames: bufferFrames)
        if filled < 0 { return classify(Int32(filled), play) }
        if let cap {
            let rc = snd_pcm_start(cap.handle)
            if rc < 0 { return classify(rc, cap) }
        }
        if !linked.load(ordering: .relaxed) {
            let rc = snd_pcm_start(play.handle)
            if rc < 0 { return classify(rc, play) }
        }
        let now = monotonicNanoseconds()
        recordTriggers(cap, play)
        if pacing == .free {
            waitMode.store(.none, ordering: .relaxed)
        } else {
            // A sound card has consumed next to nothing yet; a plugin that does not pace
            // (null, file) has swallowed the whole pre-fill at once.
            let drained = snd_pcm_avail_update(play.handle) >= bufferFrames
            waitMode.store(drained ? .timer : .deviceInterrupt, ordering: .relaxed)
        }
        s.nextDeadline = now + periodNanos
        s.timing.restart()
        return nil
    }

    private func recordTriggers(_ cap: PCMDevice?, _ play: PCMDevice) {
        guard let cs = captureStatus, let ps = playbackStatus else { return }
        var ts = snd_htimestamp_t()
        if let cap, snd_pcm_status(cap.handle, cs) == 0 {
            snd_pcm_status_get_trigger_htstamp(cs, &ts)
            captureTrigger.store(Int(nanoseconds(ts)), ordering: .relaxed)
        }
        if snd_pcm_status(play.handle, ps) == 0 {
            snd_pcm_status_get_trigger_htstamp(ps, &ts)
            // Release: the report reads this one first, and then finds the capture stamp with it.
            playbackTrigger.store(Int(nanoseconds(ts)), ordering: .releasing)
        }
    }

    /// The error code of a stream that stopped (`POLLERR`), from its state.
    static func stoppedCode(_ device: PCMDevice) -> Int32 {
        switch snd_pcm_state(device.handle) {
        case SND_PCM_STATE_SUSPENDED: return -Int32(ESTRPIPE)
        case SND_PCM_STATE_DISCONNECTED: return -Int32(ENODEV)
        default: return -Int32(EPIPE)
        }
    }

    /// Recovers from an error of one stream: counts it, then restarts both streams together so
    /// that capture and playback stay aligned. Returns an error only when the device is gone.
    func recover(_ cap: PCMDevice?, _ play: PCMDevice, code: Int32, inCapture: Bool, at time: Int64,
                 kind: AudioEvent.Kind, _ s: inout LoopState) -> ALSAError? {
        let failing = inCapture ? (cap ?? play) : play
        if let gone = classify(code, failing) { return gone }
        if kind != .pollTimeout && kind != .restart { s.timing.xrun(inCapture: inCapture) }
        var reported = kind
        if code == -Int32(ESTRPIPE) {
            reported = .suspended
            // Resume where the hardware allows it; otherwise prepare below.
            var tries = 0
            while snd_pcm_resume(failing.handle) == -Int32(EAGAIN) && tries < 100 {
                sleepUntil(monotonicNanos: monotonicNanoseconds() + 10_000_000)
                tries += 1
            }
        }
        if let cap { snd_pcm_drop(cap.handle) }
        if !linked.load(ordering: .relaxed) { snd_pcm_drop(play.handle) }
        if let error = start(cap, play, &s) { return error }
        control.report(reported, at: time, duration: monotonicNanoseconds() - time)
        return nil
    }

    /// The error to give up with when `code` means the device went away; nil otherwise.
    private func classify(_ code: Int32, _ device: PCMDevice) -> ALSAError? {
        if code == -Int32(ENODEV) || code == -Int32(EBADFD) || code == -Int32(ENXIO) || code == -Int32(EIO) {
            return .disappeared(device: device.name, code: code)
        }
        return nil
    }
}
