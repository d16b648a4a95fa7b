import Logging
import StageboxFormatting

extension ALSADriver {
    /// What was opened, and whether the streams could be linked.
    public func openReport() -> [(Logger.Level, String)] {
        let p = parameters
        let playbackOnly = p.captureDevice == ALSAParameters.noCapture
        let captureText = playbackOnly ? "none (the codec inputs are silent)" : "'\(p.captureDevice)' \(p.inputs) ch"
        var lines: [(Logger.Level, String)] = [
            (.info, "ALSA: capture \(captureText), playback '\(p.playbackDevice)' \(p.outputs) ch, \(p.format.rawValue) "
                + "\(p.sampleRate) Hz, \(period) × \(p.periods) frames"),
        ]
        if !isLinked && !playbackOnly {
            lines.append((.notice, "ALSA: the streams cannot be linked (snd_pcm_link: Function not implemented "
                          + "on user-space plugins); starting both by hand"))
        }
        return lines
    }

    /// The trigger timestamps of the start: equal when the link started both streams at once.
    public func startReport() -> String? {
        // The playback stamp is written last (`recordTriggers`): once it is seen, so is the capture one.
        let p = playbackTrigger.load(ordering: .acquiring), c = captureTrigger.load(ordering: .relaxed)
        guard p != 0 else { return nil }
        func seconds(_ n: Int) -> String { "\(n / 1_000_000_000).\(String(n % 1_000_000_000).leftPadded(9, with: "0"))" }
        guard parameters.captureDevice != ALSAParameters.noCapture else {
            return "start: playback only, playback trigger \(seconds(p)) s"
        }
        let relation = c == p ? "equal" : "differ by \(abs(c - p)) ns"
        return "start: \(isLinked ? "linked" : "not linked"), capture trigger \(seconds(c)) s, "
            + "playback trigger \(seconds(p)) s (\(relation))"
    }
}
