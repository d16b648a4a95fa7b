import StageboxFormatting
import ArgumentParser
import CALSA
import Logging
import StageboxAudioFiles
import StageboxEngine
import StageboxBusServer
import StageboxDrivers
import StageboxControls
import StageboxConfig
import StageboxConsole
import StageboxWatchdog
import StageboxLifecycle
import Synchronization
import StageboxRealtime
import StageboxTriggers
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the appliance: the codec loop (or a simulated board) and the bus.")

    @Option(help: "The configuration file (default: /boot/stagebox.toml, then /etc/stagebox.toml, then built-in defaults).")
    var config: String?

    @Flag(help: "Run on a simulated board paced by a timer, with no codec.")
    var simulate = false

    @Option(help: "Stop after N frames, print the statistics, and exit 0.")
    var frames: Int?

    @Option(help: "With --simulate: what the simulated codec inputs hear (sine, noise, silence).")
    var inputSignal: String = "sine"

    @Option(help: "With --simulate: write what the codec outputs play to this WAV file.")
    var output: String?

    @Option(help: ArgumentHelp(
        "With --simulate: the inputs hear the outputs this many frames later, as through a loop cable, instead of --input-signal.",
        discussion: "At least one period (less is taken as one). For `stagebox latency`, period x periods frames "
            + "is Stagebox's own buffering on a codec; frames beyond it stand for the converters and the cable."))
    var loop: Int?

    @Flag(help: "Do not wait for the device or the clock between periods (tests and measurements).")
    var freeRun = false

    @Option(help: "With --simulate: run the simulated codec clock this many times faster than real time (0.1–64; long tests).")
    var speed: Double = 1

    func validate() throws {
        if let frames, frames <= 0 { throw ValidationError("--frames must be a positive number of frames") }
        if ToneSignal(rawValue: inputSignal) == nil {
            throw ValidationError("--input-signal must be sine, noise or silence, not '\(inputSignal)'")
        }
        if output != nil && !simulate { throw ValidationError("--output goes with --simulate") }
        if !(0.1...64).contains(speed) { throw ValidationError("--speed must be from 0.1 to 64, not \(speed)") }
        if speed != 1 && !simulate { throw ValidationError("--speed goes with --simulate") }
        if loop != nil && !simulate { throw ValidationError("--loop goes with --simulate") }
        if let loop, !(1...1_000_000).contains(loop) { throw ValidationError("--loop must be from 1 to 1000000 frames, not \(loop)") }
    }

    func run() throws {
        Log.bootstrap()
        defer { Log.writer.close(waitingUpTo: 1) }
        let logger = Logger(label: "stagebox")
        StopSignals.install()
        stagebox_alsa_silence_errors()
        // Only the audio thread touches the PCMs while the loop runs, so alsa-lib's own per-PCM
        // mutex (taken around every call for plugin PCMs; `hw` needs none) only costs a lock on
        // the audio thread. A value the user set is kept.
        setenv("LIBASOUND_THREAD_SAFE", "0", 0)

        let loaded = ConfigLoader.resolve(explicit: config)
        // Every problem of the file, as check-config finds them (connections too), not only
        // those that made it fall back to the defaults.
        let path = config ?? ConfigLoader.searchPath.first { access($0, F_OK) == 0 }
        let problems = loaded.problems.isEmpty ? [] : path.map { CheckConfigCommand.problems(in: $0) } ?? loaded.problems
        for problem in problems { logger.error("\(problem)") }
        if !loaded.problems.isEmpty { logger.warning("the configuration has problems; running on the built-in defaults") }
        let configuration = loaded.config
        let (engine, connectionProblems) = EngineBuilder.make(configuration, file: loaded.source.description, fades: true)
        for problem in connectionProblems { logger.error("\(problem)") }
        logger.info("stagebox \(StageboxVersion.string): configuration from \(loaded.source)")

        if RealtimeThread.lockMemory() != 0 {
            logger.warning("mlockall refused: the audio thread may page-fault under memory pressure")
        }
        let triggers = Self.builtinTriggers(engine)
        let recording = Recording(configuration, engine: engine, triggers: triggers, logger: logger)
        defer { recording.shutdown() }
        // The run-time changes of earlier runs, on top of the configuration, before any client.
        let state = RunningState.start(configuration, engine: engine, logger: logger)
        defer { state?.stop() }
        let server = startBus(configuration, engine: engine, triggers: triggers, logger: logger)
        defer { server?.stop() }

        let control = DriverControl(frameLimit: frames ?? 0)
        let driver: any AudioDriver
        do {
            driver = try makeDriver(configuration.audio, engine: engine, control: control)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        let watchdog = Self.startWatchdog(configuration.watchdog, logger: logger)
        defer { watchdog.stop() }
        let lifecycle = Self.startLifecycle(configuration.lifecycle, control: control, engine: engine,
                                            watchdog: watchdog, server: server, logger: logger)
        // A trigger fired (a button, the console, a client) wants the codec: it resumes.
        triggers.onChange { _, _ in lifecycle.resume() }
        // Buttons fire triggers, LEDs show them: each on a thread of its own, never the audio thread.
        let controls = RunningControls.start(configuration, triggers: triggers, logger: logger)
        defer { controls.stop() }
        // MIDI keys and pedals fire triggers too, and their LEDs show them: a thread of its own.
        let midi = RunningMIDI.start(configuration, triggers: triggers, logger: logger)
        defer { midi?.stop() }
        let consoleDevice = consolePlace(configuration.console)
        let context = AppConsoleContext(loaded: loaded, driver: driver.name, consoleDevice: consoleDevice,
                                        engine: engine, triggers: triggers, control: control, server: server,
                                        watchdog: watchdog, lifecycle: lifecycle, recording: recording,
                                        controls: controls, midi: midi, state: state)
        let events = EventLog(logger: logger, control: control, onEvent: { context.record($0) })
        let console = startConsole(configuration.console, device: consoleDevice, context: context, logger: logger)
        // The same shell for `stagebox console` over the bus socket (over SSH, without a cable).
        let shell = Console(context: context)
        server?.consoleHandler.withLock {
            $0 = .init(execute: { shell.run($0) }, complete: { shell.completions(for: $0) })
        }
        defer {
            Log.writer.redirect(to: nil)
            console?.stop()
        }
        do {
            try DriverSupervisor(driver: driver, logger: logger).run {
                tick(events: events, watchdog: watchdog, lifecycle: lifecycle, server: server,
                     recording: recording, engine: engine)
            }
        } catch {
            events.finish()
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        events.finish()
        let summary = control.statistics.snapshot().summary
        logger.info("stopped after \(control.framesProcessed.load(ordering: .relaxed)) frames")
        print("statistics: frames=\(control.framesProcessed.load(ordering: .relaxed)) \(summary)")
    }

    /// Starts the console where the configuration puts it: a serial device, stdio, or nowhere.
    /// With `--simulate` on a terminal and no device in the file, it is on stdio.
    /// Where the console goes: the configured device; with `--simulate` and none configured,
    /// the terminal stagebox runs in (or nowhere without one).
    private func consolePlace(_ section: ConsoleSection) -> String {
        guard simulate && !section.deviceGiven else { return section.device }
        return isatty(0) == 1 ? "stdio" : "none"
    }

    private func startConsole(_ section: ConsoleSection, device: String, context: ConsoleContext,
                              logger: Logger) -> ConsoleRunner? {
        let console = Console(context: context)
        switch device {
        case "none":
            return nil
        case "stdio":
            // The terminal stagebox was started from: Ctrl-C, Ctrl-D, exit and quit stop it there.
            let runner = ConsoleRunner(console: console, input: 0, output: 1, rawTerminal: isatty(0) == 1,
                                       quit: { StopSignals.requestStop() })
            do {
                try runner.start()
            } catch {
                logger.error("console: \(error); running without a console")
                return nil
            }
            // The log on the same terminal goes above the prompt, never into the typed line.
            if Self.sameTerminal(1, 2) { Log.writer.redirect { runner.printAbove($0) } }
            return runner
        default:
            do {
                let port = try SerialPort(path: device, baud: section.baud)
                let runner = ConsoleRunner(console: console, input: port.descriptor, output: port.descriptor)
                SerialPorts.keep(port)
                try runner.start()
                logger.info("console on \(device) at \(section.baud) baud")
                return runner
            } catch {
                logger.warning("console: \(error); running without a console")
                return nil
            }
        }
    }

    /// Whether two descriptors are the same terminal (stdout and stderr in one window).
    static func sameTerminal(_ a: Int32, _ b: Int32) -> Bool {
        var sa = stat(), sb = stat()
        guard isatty(a) == 1, isatty(b) == 1, fstat(a, &sa) == 0, fstat(b, &sb) == 0 else { return false }
        return sa.st_rdev == sb.st_rdev
    }

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

    /// Starts the bus for client programs; without it the appliance still plays.
    private func startBus(_ config: StageboxConfiguration, engine: Engine, triggers: TriggerBoard,
                          logger: Logger) -> BusServer? {
        let settings = BusServerSettings(socketPath: config.bus.socket, maxClients: config.bus.maxClients,
                                         maxPortsPerClient: config.bus.maxPortsPerClient,
                                         filterDeadlinePercent: config.bus.filterDeadlinePercent)
        do {
            let server = try BusServer(settings: settings, engine: engine, triggers: triggers, logger: logger,
                                       serverVersion: StageboxVersion.string)
            try server.start()
            return server
        } catch {
            logger.error("\(error); running without client programs")
            return nil
        }
    }

    /// The simulated board or the ALSA codec, as the flags say.
    private func makeDriver(_ audio: AudioSection, engine: Engine, control: DriverControl) throws -> any AudioDriver {
        if simulate {
            let writer = try output.map {
                try AudioFileWriter(path: $0, sampleRate: audio.rate, channels: audio.outputs, encoding: .float32)
            }
            return SimulatedDriver(engine: engine, control: control,
                                   inputSignal: ToneSignal(rawValue: inputSignal) ?? .sine, output: writer,
                                   speed: speed, realtimePriority: audio.rtPriority, loopDelay: loop)
        }
        let parameters = ALSAParameters(
            captureDevice: audio.capture, playbackDevice: audio.playback,
            format: SampleFormat(rawValue: audio.format) ?? .s32, sampleRate: audio.rate,
            inputs: audio.inputs, outputs: audio.outputs, periods: audio.periods,
            realtimePriority: audio.rtPriority)
        return ALSADriver(parameters: parameters, engine: engine, control: control,
                          pacing: freeRun ? .free : .automatic)
    }
}

/// Keeps open serial ports alive for the console's lifetime.
enum SerialPorts {
    nonisolated(unsafe) static var open: [SerialPort] = []
    static func keep(_ port: SerialPort) { open.append(port) }
}

/// The control thread's periodic work while audio runs.
private func tick(events: EventLog, watchdog: WatchdogFeeder, lifecycle: LifecycleController, server: BusServer?,
                  recording: Recording, engine: Engine) {
    // A signal stops cleanly: the outputs fade out before the streams close.
    if StopSignals.stopRequested { lifecycle.stop() }
    events.drain()
    recording.tick(engine: engine)
    let use = BusUse(clientPorts: server?.clients.reduce(0) { $0 + $1.ports.count } ?? 0, takes: recording.runningTakes,
                      playing: recording.player.isPlaying ? 1 : 0)
    watchdog.tick(healthy: lifecycle.tick(use: use))
}
