import StageboxState
import DequeModule
import StageboxEngine
import StageboxBusServer
import StageboxDrivers
import StageboxConfig
import StageboxConsole
import StageboxControls
import StageboxWatchdog
import StageboxLogging
import StageboxLifecycle
import StageboxFormatting
import Synchronization
import StageboxTriggers
import StageboxSystem
import StageboxUpdate
import StageboxHealth

/// The running appliance as the console sees it.
// @unchecked: every stored property is a constant; the parts that change (the engine, the
// server, the driver's control, the history) guard themselves with atomics or a Mutex.
final class AppConsoleContext: ConsoleContext, @unchecked Sendable {
    let version: String
    let startedAt = monotonicNanoseconds()
    let driver: String
    let sampleRate: Int
    let format: String
    let period: Int
    let periods: Int
    let engine: Engine
    let triggers: TriggerBoard
    let control: DriverControl
    let server: BusServer?
    let configuration: [String]
    /// Where the configuration came from (a support bundle goes beside its file).
    let configSource: ConfigSource
    /// The configuration file read, even one whose problems put the appliance on the defaults.
    let configFile: String?
    let watchdogFeeder: WatchdogFeeder
    let lifecycle: LifecycleController
    let recording: Recording
    let controls: RunningControls
    let runningMIDI: RunningMIDI?
    let stateKeeper: StateKeeper?
    let updater: Updater
    let healthMonitor: HealthMonitor?
    /// The last `historyLength` events of the audio thread, oldest first.
    private let history = Mutex<Deque<XrunRecord>>([])
    private let historyLength = 32

    init(version: String, loaded: LoadedConfig, driver: String, consoleDevice: String, engine: Engine, triggers: TriggerBoard, control: DriverControl,
         server: BusServer?, watchdog: WatchdogFeeder, lifecycle: LifecycleController,
         recording: Recording, controls: RunningControls, midi: RunningMIDI?, state: StateKeeper?, updater: Updater,
         health: HealthMonitor?) {
        let audio = loaded.config.audio
        self.version = version
        self.driver = driver
        sampleRate = audio.rate
        format = audio.format
        period = audio.period
        periods = audio.periods
        self.engine = engine
        self.triggers = triggers
        self.control = control
        self.server = server
        watchdogFeeder = watchdog
        self.lifecycle = lifecycle
        self.recording = recording
        self.controls = controls
        runningMIDI = midi
        stateKeeper = state
        self.updater = updater
        healthMonitor = health
        configSource = loaded.source
        configFile = loaded.file
        var lines = ["configuration from \(loaded.source)",
                     "[audio] capture=\(audio.capture) playback=\(audio.playback) rate=\(audio.rate) format=\(audio.format)",
                     "        inputs=\(audio.inputs) outputs=\(audio.outputs) period=\(audio.period) periods=\(audio.periods) "
                         + "rt_priority=\(audio.rtPriority)",
                     "[tone] signal=\(loaded.config.tone.signal) frequency=\(loaded.config.tone.frequency) "
                         + "level_db=\(loaded.config.tone.levelDB)",
                     "[bus] socket=\(loaded.config.bus.socket)",
                     "[console] device=\(consoleDevice)"
                         + (consoleDevice == "stdio" ? " (the terminal stagebox runs in)" : " baud=\(loaded.config.console.baud)")
                         + (consoleDevice != loaded.config.console.device && loaded.config.console.deviceGiven
                            ? " (the file says \(loaded.config.console.device))" : ""),
                     "[watchdog] device=\(loaded.config.watchdog.device) timeout=\(loaded.config.watchdog.timeout)",
                     "[health] warn_temp_c=\(fixed(loaded.config.health.warnTemperature, digits: 1))",
                     "[lifecycle] suspend_after=\(fixed(loaded.config.lifecycle.suspendAfter, digits: 1)) s"
                         + (loaded.config.lifecycle.suspendAfter == 0 ? " (never)" : "")
                         + " fade_ms=\(fixed(loaded.config.lifecycle.fadeMs, digits: 1))",
                     "[recorder] directory=\(loaded.config.recorder.directory) sources=\(loaded.config.recorder.sources.joined(separator: ","))"
                         + " encoding=\(loaded.config.recorder.encoding) sync_interval_ms=\(loaded.config.recorder.syncIntervalMs)"
                         + " pre_roll_s=\(fixed(loaded.config.recorder.preRollSeconds, digits: 1)) min_free_mb=\(loaded.config.recorder.minFreeMB)"]
        lines += loaded.config.buttons.map { b in
            "[[button]] \(b.name) \(b.chip):\(b.line) active=\(b.active) bias=\(b.bias) debounce_ms=\(b.debounceMs) "
                + "press=\(b.press.isEmpty ? "-" : b.press) release=\(b.release.isEmpty ? "-" : b.release) "
                + "long_press=\(b.longPress.isEmpty ? "-" : "\(b.longPress) (\(b.longPressMs) ms)")"
        }
        lines += loaded.config.leds.map { "[[led]] \($0.chip):\($0.line) active=\($0.active) trigger=\($0.trigger)" }
        if let m = loaded.config.midi {
            lines.append("[midi] connect=\(RunningMIDI.describe(m.connect))")
            lines += m.maps.map { e in
                "[[midi.map]] " + (e.note.map { "note=\($0)" } ?? "cc=\(e.cc ?? 0)") + " channel=\(e.channel.map { "\($0)" } ?? "any") "
                    + "press=\(e.press.isEmpty ? "-" : e.press) release=\(e.release.isEmpty ? "-" : e.release) "
                    + "long_press=\(e.longPress.isEmpty ? "-" : "\(e.longPress) (\(e.longPressMs) ms)")"
            }
        }
        lines += loaded.problems.isEmpty ? ["no problems"] : ["problems (the defaults are in effect):"]
            + loaded.problems.map { "  \($0)" }
        configuration = lines
    }

    var statistics: AudioStatistics { control.statistics }

    /// The lifecycle's state and why; while the codec cannot be opened, when the next try is.
    var lifecycleState: String {
        guard control.state.load(ordering: .relaxed) == .waitingForDevice else { return lifecycle.summary() }
        let left = max(0, control.retryAt.load(ordering: .relaxed) - monotonicNanoseconds())
        return "waiting for the codec (retry in \((left + 999_999_999) / 1_000_000_000) s)"
    }

    func suspend() -> String? { lifecycle.suspend()?.description }

    func resume() -> String {
        let before = lifecycle.state
        lifecycle.resume()
        return before == .suspended || before == .suspending ? "resuming" : "the codec is \(before.rawValue); nothing to resume"
    }

    var buttons: [ButtonWatcher.Status] { controls.buttons?.statuses ?? [] }

    var midiStatus: String? { runningMIDI?.statusLine }
    var midi: [String]? { runningMIDI?.lines }

    func state(_ action: String) -> String {
        guard let keeper = stateKeeper else {
            let why = "no [state] in the configuration: nothing is kept across restarts"
            return action == "show" ? why : "refused: \(why)"
        }
        switch action {
        case "show": return keeper.shown
        case "save": return keeper.saveNow()
        default: return keeper.clear()
        }
    }

    var lifecycleChanges: [String] {
        let start = Double(startedAt) / 1e9
        return lifecycle.changes.map {
            "\(fixed($0.time - start, digits: 1).leftPadded(9)) s  \($0.from.rawValue) → \($0.to.rawValue)  \($0.reason)"
        }
    }
    var watchdog: String? { watchdogFeeder.describe() }

    func record(start: Bool) -> String { recording.record(start: start) }
    func update(_ arguments: [String]) -> String {
        switch arguments.first {
        case nil: return updater.describe()
        case "--rollback": return updater.rollback()
        case let file? where !file.hasPrefix("/"):
            // Whose folder a relative path would be read from is not the caller's to know.
            return "refused: give the bundle as an absolute path, not '\(file)'"
        case let file?: return updater.install(file, force: arguments.dropFirst().first == "--force")
        }
    }
    var updateStatus: String? { updater.statusLine }
    var takes: [String] { recording.takes }
    var recorderStatus: String? { recording.statusLine }
    var storage: [String] { recording.storage }
    func eject(_ name: String) -> String { recording.eject(name) }
    func copyTakes(_ arguments: [String]) -> String {
        arguments == ["status"] ? recording.copyStatus ?? "no copy since stagebox started" : recording.copyTakes(arguments)
    }
    func slate(_ words: [String]) -> String { recording.slate(words) }

    var clients: [ClientSummary] {
        (server?.clients ?? []).map { c in
            ClientSummary(name: c.name, pid: c.pid, ports: c.ports.map {
                .init(name: $0.name, rate: $0.clientRate, underruns: $0.underruns, overruns: $0.overruns, fill: $0.fill,
                      target: $0.targetFill, ratio: $0.ratio)
            })
        }
    }

    var ringFaults: Int { server?.ringFaults.load(ordering: .relaxed) ?? 0 }

    var xruns: [XrunRecord] { history.withLock { Array($0) } }
    func clearXruns() { history.withLock { $0 = [] } }

    /// Called by the event log for every event of the audio thread, with the context of an xrun.
    func record(_ event: AudioEvent, context: String?) {
        history.withLock {
            if $0.count == historyLength { $0.removeFirst() }
            $0.append(XrunRecord(timeNanos: event.timeNanos, kind: event.kind.rawValue, durationNanos: event.durationNanos,
                                 context: context ?? ""))
        }
    }

    /// What the board was like at an xrun: the latest health reading and the recorder's ring.
    var xrunContext: String {
        var parts: [String] = []
        if var reading = healthMonitor?.latest {
            reading.clockSynchronized = nil // the wall clock has nothing to do with an xrun
            parts += reading.parts
        }
        if let fill = recording.recorder.ringFill { parts.append("recorder ring \(Int((fill * 100).rounded())) %") }
        return parts.joined(separator: ", ")
    }

    var healthStatus: String? { healthMonitor?.latest?.summary }

    var health: [String]? {
        guard let monitor = healthMonitor else { return nil }
        var lines = ["now: " + (monitor.latest?.summary ?? "no reading yet")]
        let changes = monitor.history
        lines.append(changes.isEmpty ? "no changes since start" : "changes since start:")
        lines += changes.map { "  \(fixed(Double($0.time - startedAt) / 1e9, digits: 1)) s  \($0.line)" }
        return lines
    }

    func log(last count: Int) -> [String] { LogRing.shared.last(count) }
}
