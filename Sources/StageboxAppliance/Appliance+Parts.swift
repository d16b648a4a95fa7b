import Logging
import StageboxAudioFiles
import StageboxBusServer
import StageboxConfig
import StageboxDrivers
import StageboxEngine
import StageboxFormatting
import StageboxLifecycle
import StageboxSystem
import StageboxTriggers
import StageboxWatchdog
import Synchronization

/// The parts of the appliance, each made as the configuration says; a part that cannot be had
/// is logged and the appliance runs without it.
extension Appliance {
    /// Opens the watchdog the configuration names (and systemd's, when it started us). A
    /// watchdog that cannot be opened is logged, and stagebox runs without it.
    static func startWatchdog(_ section: WatchdogSection, logger: Logger) -> WatchdogFeeder {
        var hardware: Watchdog?
        var timeout: Int?
        if section.device != "none" {
            do {
                let dog = try Watchdog(path: section.device)
                timeout = dog.setTimeout(seconds: section.timeout)
                if timeout == nil { logger.warning("watchdog \(section.device): the driver keeps its own timeout") }
                hardware = dog
                logger.info("watchdog \(section.device) armed\(timeout.map { ", timeout \($0) s" } ?? ""); fed while audio runs")
            } catch {
                logger.error("\(error); running without the hardware watchdog")
            }
        }
        let systemd = SystemdNotifier()
        return WatchdogFeeder(hardware: hardware, timeoutSeconds: timeout, systemd: systemd)
    }

    /// The lifecycle's owner: every change is logged, told to systemd (`STATUS=`, and `READY=1`
    /// once the codec first runs) and kept for the console.
    static func startLifecycle(_ section: LifecycleSection, control: DriverControl, engine: Engine,
                               watchdog: WatchdogFeeder, server: BusServer?, logger: Logger) -> LifecycleController {
        let settings = LifecycleMachine.Settings(suspendAfter: section.suspendAfter, fadeSeconds: section.fadeMs / 1000)
        let ready = Atomic<Bool>(false)
        let resumeBegan = Atomic<Int64>(0)
        return LifecycleController(settings: settings, control: control, fade: engine.outputFade) { change in
            logger.notice("lifecycle: \(change.from.rawValue) → \(change.to.rawValue) (\(change.reason))")
            server?.announceLifecycle(state: change.to.rawValue, reason: change.reason)
            if change.to == .resuming { resumeBegan.store(monotonicNanoseconds(), ordering: .relaxed) }
            if change.from == .resuming && change.to == .running {
                let first = control.firstPeriodAt.load(ordering: .relaxed)
                let began = resumeBegan.load(ordering: .relaxed)
                let asked = server?.portRequestedAt.load(ordering: .relaxed) ?? 0
                // Timed from the client's port request when that is what woke the codec.
                let (from, what) = asked > began - 1_000_000_000 && asked <= began
                    ? (asked, "the client asked for its port") : (began, "the resume began")
                logger.notice("lifecycle: resumed: the first period \(fixed(Double(first - from) / 1e6, digits: 1)) ms after \(what)")
            }
            watchdog.notifySystemd("STATUS=\(change.to.rawValue): \(change.reason)")
            if change.to == .running && !ready.exchange(true, ordering: .relaxed) { watchdog.notifySystemd("READY=1") }
        }
    }

    /// The triggers Stagebox always has: `mute` toggles the codec inputs' mute (`Recording` adds
    /// `record`, `marker`, `play` and `mute-out`).
    static func builtinTriggers(_ engine: Engine) -> TriggerBoard {
        let triggers = TriggerBoard()
        triggers.add(name: "mute", title: "Mute the codec inputs") {
            let muted = !((try? engine.isMuted(BuiltinPort.codecIn)) ?? false)
            try? engine.setMuted(BuiltinPort.codecIn, muted)
            return muted ? .selected : .normal
        }
        // However the codec ports are muted (the console, a client, the restored state), the
        // mute triggers show it, and so do their LEDs.
        engine.onChange { change in
            guard case let .muteChanged(port, muted) = change else { return }
            if port == BuiltinPort.codecIn { triggers.setState("mute", muted ? .selected : .normal) }
            if port == BuiltinPort.codecOut { triggers.setState("mute-out", muted ? .selected : .normal) }
        }
        return triggers
    }

    /// Makes the bus for client programs, not yet listening (`startBus` opens it once the
    /// console it serves exists); without it the appliance still plays.
    static func makeBus(_ config: StageboxConfiguration, engine: Engine, triggers: TriggerBoard, version: String,
                        logger: Logger) -> BusServer? {
        let settings = BusServerSettings(socketPath: config.bus.socket, maxClients: config.bus.maxClients,
                                         maxPortsPerClient: config.bus.maxPortsPerClient,
                                         filterDeadlinePercent: config.bus.filterDeadlinePercent)
        do {
            return try BusServer(settings: settings, engine: engine, triggers: triggers, logger: logger,
                                 serverVersion: version)
        } catch {
            logger.error("\(error); running without client programs")
            return nil
        }
    }

    /// Opens the bus's socket. A client that sees the socket finds everything behind it ready,
    /// the console included (a script's first `stagebox console --execute` is answered).
    static func startBus(_ server: BusServer?, logger: Logger) {
        do throws(BusServerError) {
            try server?.start()
        } catch {
            logger.error("\(error); running without client programs")
        }
    }

    /// The simulated board or the ALSA codec, as the flags say.
    static func makeDriver(_ audio: AudioSection, options: ApplianceOptions, engine: Engine,
                           control: DriverControl) throws(ApplianceError) -> any AudioDriver {
        if options.simulate {
            var writer: AudioFileWriter?
            if let output = options.output {
                do {
                    writer = try AudioFileWriter(path: output, sampleRate: audio.rate, channels: audio.outputs, encoding: .float32)
                } catch {
                    throw ApplianceError(description: "\(error)")
                }
            }
            return SimulatedDriver(engine: engine, control: control, inputSignal: options.inputSignal, output: writer,
                                   speed: options.speed, realtimePriority: audio.rtPriority, loopDelay: options.loop)
        }
        let parameters = ALSAParameters(
            captureDevice: audio.capture, playbackDevice: audio.playback,
            format: SampleFormat(rawValue: audio.format) ?? .s32, sampleRate: audio.rate,
            inputs: audio.inputs, outputs: audio.outputs, periods: audio.periods,
            realtimePriority: audio.rtPriority)
        return ALSADriver(parameters: parameters, engine: engine, control: control,
                          pacing: options.freeRun ? .free : .automatic)
    }
}
