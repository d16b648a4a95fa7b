import StageboxPortRules
import TOMLKit

/// Reads `stagebox.toml` text into a configuration, collecting every problem on the way.
///
/// A value with a problem keeps its default, so that a caller who must run anyway
/// (the appliance at boot) still gets a complete configuration.
public struct ConfigParser {
    public let file: String
    let lines: SourceLines
    var problems: [ConfigProblem] = []

    private init(file: String, text: String) {
        self.file = file
        self.lines = SourceLines(text)
    }

    /// Parses `text`, naming `file` in the problems, in line order. An empty problem list means
    /// the file is good; with problems, each value that has one keeps its default.
    public static func parse(_ text: String, file: String) -> (StageboxConfiguration, [ConfigProblem]) {
        let reading = read(text, file: file)
        return (reading.config ?? StageboxConfiguration(), reading.problems)
    }

    /// As `parse`, but with no configuration when `text` is not TOML at all.
    public static func read(_ text: String, file: String) -> ConfigReading {
        var parser = ConfigParser(file: file, text: text)
        let config = parser.read(text)
        return ConfigReading(config: config, problems: ConfigProblem.inLineOrder(parser.problems))
    }

    private mutating func read(_ text: String) -> StageboxConfiguration? {
        var config = StageboxConfiguration()
        // Every [[button]] and [[led]], with whether it is free of problems so far.
        var buttons: [(entry: ButtonEntry, ok: Bool)] = []
        var leds: [(entry: LEDEntry, ok: Bool)] = []
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            problems.append(.init(file: file, line: error.source.begin.line, key: "(syntax)",
                                  message: error.description))
            return nil
        } catch {
            problems.append(.init(file: file, line: 1, key: "(syntax)", message: "\(error)"))
            return nil
        }
        for key in root.keys.sorted(by: { lines.line(section: $0) < lines.line(section: $1) }) {
            switch key {
            case "audio": if let t = table(root, key) { readAudio(t, into: &config.audio) }
            case "tone": if let t = table(root, key) { readTone(t, into: &config.tone) }
            case "bus": if let t = table(root, key) { readBus(t, into: &config.bus) }
            case "console": if let t = table(root, key) { readConsole(t, into: &config.console) }
            case "watchdog": if let t = table(root, key) { readWatchdog(t, into: &config.watchdog) }
            case "health": if let t = table(root, key) { readHealth(t, into: &config.health) }
            case "clock": if let t = table(root, key) { readClock(t, into: &config.clock) }
            case "lifecycle": if let t = table(root, key) { readLifecycle(t, into: &config.lifecycle) }
            case "recorder": if let t = table(root, key) { readRecorder(t, into: &config.recorder) }
            case "connect": config.connections = readConnections(root[key]!)
            case "button": buttons = readButtons(root[key]!)
            case "led": leds = readLEDs(root[key]!)
            case "midi": if let t = table(root, key) { config.midi = readMIDI(t) }
            case "state": if let t = table(root, key) { config.state = readState(t) }
            default:
                problems.append(.init(file: file, line: lines.line(section: key, key: key), key: key,
                                      message: "unknown section or key", allowed: "[audio], [tone], [bus], [console], [watchdog], [health], [clock], [lifecycle], [recorder], [[connect]], [[button]], [[led]], [midi], [[midi.map]], [state]"))
            }
        }
        // Checks across sections: a tone at or above half the rate would alias to another pitch.
        let nyquist = Double(config.audio.rate) / 2
        if config.tone.frequency >= nyquist {
            problems.append(.init(file: file, line: lines.line(section: "tone", key: "frequency"), key: "tone.frequency",
                                  message: "\(config.tone.frequency) Hz is not below half the sample rate "
                                      + "(\(config.audio.rate) Hz): it would sound at another pitch",
                                  allowed: "below \(Int(nyquist)) Hz"))
        }
        (config.buttons, config.leds) = checkSharedLines(buttons: buttons, leds: leds)
        return config
    }

    private mutating func table(_ root: TOMLTable, _ key: String) -> TOMLTable? {
        guard let t = root[key]?.table else {
            problems.append(.init(file: file, line: lines.line(section: "", key: key), key: key,
                                  message: "must be a table, like [\(key)]"))
            return nil
        }
        return t
    }

    private mutating func readAudio(_ t: TOMLTable, into audio: inout AudioSection) {
        let allowed = ["capture", "playback", "rate", "format", "inputs", "outputs", "period", "periods", "rt_priority"]
        var fields = Fields(parser: self, table: t, section: "audio", allowedKeys: allowed)
        fields.string("capture", &audio.capture, nonEmpty: true)
        fields.string("playback", &audio.playback, nonEmpty: true)
        fields.int("rate", &audio.rate, range: AudioSection.rateRange)
        fields.choice("format", &audio.format, among: AudioSection.formats)
        fields.int("inputs", &audio.inputs, range: PortRules.channelRange)
        fields.int("outputs", &audio.outputs, range: PortRules.channelRange)
        fields.int("period", &audio.period, range: 16...4096)
        fields.int("periods", &audio.periods, range: 2...16)
        fields.int("rt_priority", &audio.rtPriority, range: 0...99)
        problems = fields.parser.problems
    }

    private mutating func readTone(_ t: TOMLTable, into tone: inout ToneSection) {
        var fields = Fields(parser: self, table: t, section: "tone", allowedKeys: ["signal", "frequency", "level_db"])
        fields.choice("signal", &tone.signal, among: ToneSection.signals)
        fields.double("frequency", &tone.frequency, range: 1...96_000)
        fields.double("level_db", &tone.levelDB, range: -120...0)
        problems = fields.parser.problems
    }

    private mutating func readBus(_ t: TOMLTable, into bus: inout BusSection) {
        let allowed = ["socket", "max_clients", "max_ports_per_client", "filter_deadline_percent"]
        var fields = Fields(parser: self, table: t, section: "bus", allowedKeys: allowed)
        fields.string("socket", &bus.socket, nonEmpty: true)
        if !bus.socket.hasPrefix("/") {
            fields.problem("socket", "'\(bus.socket)' is not an absolute path (stagebox and its clients run from different folders)",
                           allowed: "a path from /, like /run/stagebox/bus.sock")
            bus.socket = BusSection().socket
        } else if bus.socket.utf8.count > 107 {
            fields.problem("socket", "is \(bus.socket.utf8.count) bytes long; a Unix socket's path holds at most 107")
            bus.socket = BusSection().socket
        }
        fields.int("max_clients", &bus.maxClients, range: 1...256)
        fields.int("max_ports_per_client", &bus.maxPortsPerClient, range: 1...64)
        fields.int("filter_deadline_percent", &bus.filterDeadlinePercent, range: 5...90)
        problems = fields.parser.problems
    }

    private mutating func readConsole(_ t: TOMLTable, into console: inout ConsoleSection) {
        var fields = Fields(parser: self, table: t, section: "console", allowedKeys: ["device", "baud"])
        fields.string("device", &console.device, nonEmpty: true)
        console.deviceGiven = t["device"]?.string != nil
        var baud = console.baud
        fields.int("baud", &baud, range: 300...4_000_000)
        if ConsoleSection.baudRates.contains(baud) {
            console.baud = baud
        } else if baud != console.baud {
            fields.problem("baud", "\(baud) is not a supported rate",
                           allowed: ConsoleSection.baudRates.map(String.init).joined(separator: ", "))
        }
        problems = fields.parser.problems
    }

    private mutating func readWatchdog(_ t: TOMLTable, into watchdog: inout WatchdogSection) {
        var fields = Fields(parser: self, table: t, section: "watchdog", allowedKeys: ["device", "timeout"])
        fields.string("device", &watchdog.device, nonEmpty: true)
        fields.int("timeout", &watchdog.timeout, range: 2...600)
        problems = fields.parser.problems
    }

    private mutating func readHealth(_ t: TOMLTable, into health: inout HealthSection) {
        var fields = Fields(parser: self, table: t, section: "health", allowedKeys: ["warn_temp_c"])
        fields.double("warn_temp_c", &health.warnTemperature, range: HealthSection.warnTemperatureRange)
        problems = fields.parser.problems
    }

    private mutating func readClock(_ t: TOMLTable, into clock: inout ClockSection) {
        var fields = Fields(parser: self, table: t, section: "clock", allowedKeys: ["file", "save_interval_s", "rtc", "rtc_i2c_bus"])
        fields.string("file", &clock.file, nonEmpty: false)
        if !clock.file.isEmpty && !clock.file.hasPrefix("/") {
            fields.problem("file", "'\(clock.file)' is not an absolute path", allowed: "a path from /, like /data/stagebox-clock, or \"\"")
            clock.file = ""
        }
        fields.int("save_interval_s", &clock.saveInterval, range: ClockSection.saveIntervalRange)
        fields.string("rtc", &clock.rtc, nonEmpty: false)
        if !clock.rtc.isEmpty && !ClockSection.rtcAddresses.contains(where: { $0.chip == clock.rtc }) {
            fields.problem("rtc", "'\(clock.rtc)' is not a chip the kernel's rtc-ds1307 drives",
                           allowed: ClockSection.rtcAddresses.map(\.chip).joined(separator: ", ") + ", or \"\" for none")
            clock.rtc = ""
        }
        fields.int("rtc_i2c_bus", &clock.rtcBus, range: ClockSection.rtcBusRange)
        problems = fields.parser.problems
    }

    private mutating func readLifecycle(_ t: TOMLTable, into lifecycle: inout LifecycleSection) {
        var fields = Fields(parser: self, table: t, section: "lifecycle", allowedKeys: ["suspend_after", "fade_ms"])
        fields.double("suspend_after", &lifecycle.suspendAfter, range: LifecycleSection.suspendAfterRange)
        fields.double("fade_ms", &lifecycle.fadeMs, range: LifecycleSection.fadeRange)
        problems = fields.parser.problems
    }

    /// `[state]`: file (required, absolute), restore, write_delay_ms. A section with a problem
    /// is left out: nothing is written where the file does not say.
    private mutating func readState(_ t: TOMLTable) -> StateSection? {
        var state = StateSection()
        let before = problems.count
        var fields = Fields(parser: self, table: t, section: "state", allowedKeys: ["file", "restore", "write_delay_ms"])
        fields.string("file", &state.file, nonEmpty: true, required: true)
        if !state.file.isEmpty && (!state.file.hasPrefix("/") || state.file.hasSuffix("/")) {
            fields.problem("file", "'\(state.file)' is not an absolute path to a file", allowed: "a path from /, like /data/stagebox-state.toml")
        }
        fields.bool("restore", &state.restore)
        fields.int("write_delay_ms", &state.writeDelayMs, range: StateSection.writeDelayRange)
        problems = fields.parser.problems
        return problems.count == before ? state : nil
    }

    private mutating func readRecorder(_ t: TOMLTable, into recorder: inout RecorderSection) {
        let allowed = ["directory", "source", "sources", "encoding", "sync_interval_ms", "pre_roll_s", "min_free_mb", "mirror", "mount_sticks", "project", "scene", "tape"]
        var fields = Fields(parser: self, table: t, section: "recorder", allowedKeys: allowed)
        fields.string("directory", &recorder.directory, nonEmpty: true)
        if !recorder.directory.hasPrefix("/") {
            fields.problem("directory", "'\(recorder.directory)' is not an absolute path", allowed: "a path from /, like /data/recordings")
            recorder.directory = RecorderSection().directory
        }
        if t["source"] != nil && t["sources"] != nil {
            fields.problem("sources", "give source or sources, not both")
        } else if t["source"] != nil {
            var one = ""
            fields.string("source", &one, nonEmpty: true)
            if fields.endpointPort("source", one) && fields.recordable("source", one) { recorder.sources = [one] }
        } else if let v = t["sources"] {
            if let array = v.array, !array.isEmpty, array.allSatisfy({ $0.string != nil }) {
                let names = array.compactMap(\.string)
                var good = true
                for name in names where !(fields.endpointPort("sources", name) && fields.recordable("sources", name)) { good = false }
                if Set(names).count != names.count { fields.problem("sources", "a source is listed twice"); good = false }
                if good { recorder.sources = names }
            } else {
                fields.problem("sources", "must be a non-empty array of port names", allowed: "sources = [\"codec.in\", \"call.out\"]")
            }
        }
        fields.choice("encoding", &recorder.encoding, among: RecorderSection.encodings)
        fields.int("sync_interval_ms", &recorder.syncIntervalMs, range: RecorderSection.syncIntervalRange)
        fields.double("pre_roll_s", &recorder.preRollSeconds, range: RecorderSection.preRollRange)
        fields.int("min_free_mb", &recorder.minFreeMB, range: RecorderSection.minFreeRange)
        fields.string("mirror", &recorder.mirror, nonEmpty: false)
        fields.bool("mount_sticks", &recorder.mountSticks)
        fields.string("project", &recorder.project, nonEmpty: false)
        fields.string("scene", &recorder.scene, nonEmpty: false)
        fields.string("tape", &recorder.tape, nonEmpty: false)
        for (key, value) in [("project", recorder.project), ("scene", recorder.scene), ("tape", recorder.tape)] {
            guard let problem = SlateText.problem(value, field: key) else { continue }
            fields.problem(key, problem)
            switch key {
            case "project": recorder.project = ""
            case "scene": recorder.scene = ""
            default: recorder.tape = ""
            }
        }
        if !(recorder.mirror.isEmpty || recorder.mirror == "usb" || recorder.mirror.hasPrefix("/")) {
            fields.problem("mirror", "'\(recorder.mirror)' is neither \"usb\" nor an absolute path",
                           allowed: "\"\" (no copy), \"usb\" (the first USB stick) or a path from /")
            recorder.mirror = ""
        } else if trimmingSlashes(recorder.mirror) == trimmingSlashes(recorder.directory) {
            fields.problem("mirror", "is the recorder's own directory: a copy must go to another medium")
            recorder.mirror = ""
        }
        problems = fields.parser.problems
    }

    private mutating func readConnections(_ value: TOMLValueConvertible) -> [ConnectEntry] {
        guard let array = value.array else {
            problems.append(.init(file: file, line: lines.line(section: "connect"), key: "connect",
                                  message: "must be an array of tables, written [[connect]]"))
            return []
        }
        var entries: [ConnectEntry] = []
        for (i, element) in array.enumerated() {
            let key = "connect[\(i + 1)]"
            guard let t = element.table else {
                problems.append(.init(file: file, line: lines.line(section: "connect", index: i), key: key,
                                      message: "must be a table with from and to"))
                continue
            }
            var entry = ConnectEntry(from: "", to: "", line: lines.line(section: "connect", index: i), number: i + 1)
            var fields = Fields(parser: self, table: t, section: "connect", arrayIndex: i, allowedKeys: ["from", "to"])
            fields.string("from", &entry.from, nonEmpty: true, required: true)
            fields.string("to", &entry.to, nonEmpty: true, required: true)
            fields.endpoint("from", entry.from)
            fields.endpoint("to", entry.to)
            let ok = fields.parser.problems.count == problems.count
            problems = fields.parser.problems
            if ok { entries.append(entry) }
        }
        return entries
    }
}

/// A path without the slashes that end it ("/data/x/" is "/data/x").
private func trimmingSlashes(_ path: String) -> Substring {
    let trimmed = path.reversed().drop { $0 == "/" }
    return Substring(String(trimmed.reversed()))
}
