import StageboxFormatting
import Logging
import StageboxRealtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ALSADriver {
    /// Runs the codec loop on a real-time thread until stopped, reopening the devices with
    /// backoff when they disappear. `tick` runs on the calling thread about every 50 ms.
    /// Throws only when the devices cannot do what the configuration asks.
    public func supervise(logger: Logger, tick: () -> Void) throws(ALSAError) {
        var backoffMs = 100
        while !control.stopRequested {
            do {
                try open()
            } catch where error.isDeviceGone {
                logger.error("\(error); trying again in \(backoffMs) ms")
                waitOrStop(milliseconds: backoffMs, tick: tick)
                backoffMs = min(backoffMs * 2, 5000)
                continue
            }
            backoffMs = 100
            let playbackOnly = parameters.captureDevice == ALSAParameters.noCapture
            let captureText = playbackOnly ? "none (the codec inputs are silent)"
                : "'\(parameters.captureDevice)' \(parameters.inputs) ch"
            logger.info(Logger.Message(stringLiteral: "ALSA: capture \(captureText), playback "
                        + "'\(parameters.playbackDevice)' \(parameters.outputs) ch, \(parameters.format.rawValue) "
                        + "\(parameters.sampleRate) Hz, \(parameters.period) × \(parameters.periods) frames"))
            if !linked.load(ordering: .relaxed) && !playbackOnly {
                logger.notice(Logger.Message(stringLiteral: "ALSA: the streams cannot be linked (snd_pcm_link: Function not implemented "
                              + "on user-space plugins); starting both by hand"))
            }
            captureTrigger.store(0, ordering: .relaxed)
            var reportedStart = false
            let (failure, outcome) = AudioThreadRunner.run(priority: parameters.realtimePriority, tick: {
                if !reportedStart, captureTrigger.load(ordering: .relaxed) != 0 {
                    reportedStart = true
                    logger.info(Logger.Message(stringLiteral: startReport()))
                }
                tick()
            }) {
                self.runLoop()
            }
            if case let .refused(priority, code) = outcome {
                logger.warning(Logger.Message(stringLiteral: "SCHED_FIFO priority \(priority) refused (\(String(cString: strerror(code)))); "
                               + "the audio thread ran at normal priority"))
            }
            close()
            guard let failure else { return }
            logger.error("\(failure); reopening in \(backoffMs) ms")
            waitOrStop(milliseconds: backoffMs, tick: tick)
        }
    }

    /// The trigger timestamps of the start: equal when the link started both streams at once.
    func startReport() -> String {
        let c = captureTrigger.load(ordering: .relaxed), p = playbackTrigger.load(ordering: .relaxed)
        func seconds(_ n: Int) -> String { "\(n / 1_000_000_000).\(String(n % 1_000_000_000).leftPadded(9, with: "0"))" }
        let relation = c == p ? "equal" : "differ by \(abs(c - p)) ns"
        return "start: \(isLinked ? "linked" : "not linked"), capture trigger \(seconds(c)) s, "
            + "playback trigger \(seconds(p)) s (\(relation))"
    }

    private func waitOrStop(milliseconds: Int, tick: () -> Void) {
        var left = milliseconds
        while left > 0 && !control.stopRequested {
            tick()
            usleep(UInt32(min(left, 50)) * 1000)
            left -= 50
        }
    }
}

