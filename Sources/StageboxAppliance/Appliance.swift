import Logging
import StageboxAudioFiles
import StageboxBusServer
import StageboxConfig
import StageboxConsole
import StageboxDrivers
import StageboxEngine
import StageboxClock
import StageboxHealth
import StageboxLifecycle
import StageboxLogging
import StageboxRealtime
import StageboxState
import StageboxSystem
import StageboxTriggers
import StageboxUpdate
import StageboxWatchdog
import Synchronization

/// The running appliance, assembled from a configuration: the engine and its connections, the
/// triggers, the recorder and player, the saved state, the bus, the driver (the codec or the
/// simulated board), the watchdog and the lifecycle, buttons, LEDs and MIDI, and the console.
/// `stagebox run` is a thin shell around it; tests make one in their own process.
///
/// `run` blocks the calling thread (the control thread) until a stop; `requestStop` from any
/// thread ends it cleanly (the outputs fade out first); `shutdown` then releases everything.
public final class Appliance: Sendable {
    public let engine: Engine
    public let triggers: TriggerBoard
    public let control: DriverControl
    public let server: BusServer?
    /// The console's shell, for lines typed anywhere (a serial console, `stagebox console`, a test).
    public let console: Console
    let driver: any AudioDriver
    let recording: Recording
    let state: StateKeeper?
    let watchdog: WatchdogFeeder
    let lifecycle: LifecycleController
    let controls: RunningControls
    let midi: RunningMIDI?
    let updater: Updater
    let health: HealthMonitor?
    let clock: ClockKeeper?
    let context: AppConsoleContext
    private let logger: Logger
    private let stopAsked = Atomic<Bool>(false)
    private let externalStop: @Sendable () -> Bool

    /// Builds and starts everything but the audio (`run` starts that). Throws only when the
    /// driver cannot be made (the output file of `--output`); everything else that fails is
    /// logged and the appliance runs without it, as on a board with a part missing.
    /// `externalStop` is asked every tick (the command line's SIGINT and SIGTERM).
    public init(_ loaded: LoadedConfig, options: ApplianceOptions, logger: Logger,
                externalStop: @escaping @Sendable () -> Bool = { false }) throws(ApplianceError) {
        self.logger = logger
        self.externalStop = externalStop
        let configuration = loaded.config
        let (engine, connectionProblems) = EngineBuilder.make(configuration, file: loaded.source.description, fades: true)
        for problem in connectionProblems { logger.error("\(problem)") }
        self.engine = engine
        let locked = MemoryLock.lock()
        if locked.error != 0 || locked.codeError != 0 { logger.warning("\(locked.summary)") } else { logger.info("\(locked.summary)") }
        triggers = Self.builtinTriggers(engine)
        // The wall clock first: set forward past the last known time before any take is named.
        clock = Self.startClock(configuration, logger: logger)
        recording = Recording(configuration, engine: engine, triggers: triggers, clock: clock, logger: logger)
        updater = Self.makeUpdater(triggers: triggers, recording: recording, logger: logger)
        Self.installBundlesFromSticks(recording: recording, updater: updater, logger: logger)
        recording.startSticks() // after its listeners: a stick plugged at boot is seen by all
        // The run-time changes of earlier runs, on top of the configuration, before any client.
        state = RunningState.start(configuration, engine: engine, logger: logger)
        server = Self.makeBus(configuration, engine: engine, triggers: triggers, version: options.version, logger: logger)
        control = DriverControl(frameLimit: options.frames ?? 0)
        do {
            driver = try Self.makeDriver(configuration.audio, options: options, engine: engine, control: control)
        } catch {
            server?.stop()
            state?.stop()
            recording.shutdown()
            throw error
        }
        watchdog = Self.startWatchdog(configuration.watchdog, logger: logger)
        // Under-voltage, throttling, heat: read and logged by a thread of their own.
        health = Self.startHealth(configuration.health, files: options.systemFiles, clock: clock, logger: logger)
        lifecycle = Self.startLifecycle(configuration.lifecycle, control: control, engine: engine,
                                        watchdog: watchdog, server: server, logger: logger)
        // A trigger fired (a button, the console, a client) wants the codec: it resumes (and
        // resume wakes the control thread, which acts on it).
        let lifecycle = self.lifecycle
        let control = self.control
        triggers.onChange { _, _ in lifecycle.resume() }
        // A port or connection that came or went (a client): the control thread syncs the
        // recorder's taps and the lifecycle's use now, not at its next idle tick.
        engine.onChange { _ in control.wakeControl() }
        // Buttons fire triggers, LEDs show them: each on a thread of its own, never the audio thread.
        controls = RunningControls.start(configuration, triggers: triggers, logger: logger)
        // MIDI keys and pedals fire triggers too, and their LEDs show them: a thread of its own.
        midi = RunningMIDI.start(configuration, triggers: triggers, logger: logger)
        context = AppConsoleContext(version: options.version, loaded: loaded, driver: driver.name,
                                    consoleDevice: options.consoleDevice, engine: engine, triggers: triggers,
                                    control: control, server: server, watchdog: watchdog, lifecycle: lifecycle,
                                    recording: recording, controls: controls, midi: midi, state: state,
                                    updater: updater, health: health)
        let shell = Console(context: context)
        console = shell
        // The same shell for `stagebox console` over the bus socket (over SSH, without a cable).
        server?.consoleHandler.withLock {
            $0 = .init(execute: { shell.run($0) }, complete: { shell.completions(for: $0) })
        }
        Self.startBus(server, logger: logger)
    }

    /// Runs the audio until a stop (`requestStop`, `externalStop`, the frame limit, the end of
    /// an input): the control thread's loop. Throws when the driver fails for good.
    public func run() throws(DriverError) {
        let context = self.context
        let events = EventLog(logger: logger, control: control, context: { context.xrunContext },
                              onEvent: { context.record($0, context: $1) })
        defer { events.finish() }
        // Idle, the control thread ticks once a second, or as often as the watchdog is fed
        // (its interval is never over a second).
        let idleTick = watchdog.isActive ? watchdog.intervalNanos : AudioThreadRunner.idleTickNanos
        try DriverSupervisor(driver: driver, logger: logger, idleTickNanos: idleTick).run { [self] in
            tick(events: events)
        }
    }

    /// A console of its own for a place to type in (the serial port, the terminal).
    public func newConsole() -> Console { Console(context: context) }

    /// Asks for a clean stop from any thread: the outputs fade out before the streams close.
    public func requestStop() {
        stopAsked.store(true, ordering: .relaxed)
        control.wakeControl()
    }

    /// Stops everything `init` started, in the reverse order. Call it once `run` has returned.
    public func shutdown() {
        clock?.stop() // saves the time once more
        health?.stop()
        updater.stop()
        midi?.stop()
        controls.stop()
        watchdog.stop()
        server?.stop()
        state?.stop()
        recording.shutdown()
    }

    /// The control thread's periodic work while audio runs. Busy (ticked again in 50 ms, not a
    /// second) while something is in motion: a stop, events from the audio thread, a take or a
    /// playback, the lifecycle between its steady states.
    private func tick(events: EventLog) -> Bool {
        let stopping = stopAsked.load(ordering: .relaxed) || externalStop()
        if stopping { lifecycle.stop() }
        let told = events.drain()
        recording.tick(engine: engine)
        let use = BusUse(clientPorts: server?.clients.reduce(0) { $0 + $1.ports.count } ?? 0, takes: recording.runningTakes,
                         playing: recording.player.isPlaying ? 1 : 0)
        let healthy = lifecycle.tick(use: use)
        watchdog.tick(healthy: healthy)
        updater.tick(healthy: healthy, now: Double(monotonicNanoseconds()) / 1e9)
        let steady = lifecycle.state == .running || lifecycle.state == .suspended
        return stopping || told > 0 || use.takes > 0 || use.playing > 0 || recording.recorder.isStarting || !steady
    }
}

/// What `stagebox run`'s flags choose beside the configuration.
public struct ApplianceOptions: Sendable {
    /// The simulated board paced by a timer instead of the ALSA codec.
    public var simulate = false
    /// Stop after this many frames.
    public var frames: Int?
    /// With `simulate`: what the simulated inputs hear, and where the outputs go.
    public var inputSignal: ToneSignal = .sine
    public var output: String?
    /// With `simulate`: inputs that hear the outputs this many frames later.
    public var loop: Int?
    /// With `simulate`: how many times faster than real time the board's clock runs.
    public var speed: Double = 1
    /// No waiting for the device or the clock between periods.
    public var freeRun = false
    /// Where the console is (a device, `stdio` or `none`), as the console's `status` shows it.
    public var consoleDevice = "none"
    /// The version the bus and the console tell.
    public var version = "0.0.0"
    /// Where health is read; nil: `/sys` and `/proc`, or what `STAGEBOX_SYSFS_ROOT` and
    /// `STAGEBOX_PROCFS_ROOT` name.
    public var systemFiles: SystemFiles?

    public init() {}
}

/// Why an appliance could not be made.
public struct ApplianceError: Error, CustomStringConvertible {
    public var description: String
}
