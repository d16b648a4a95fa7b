import StageboxFormatting
import StageboxEngine
import StageboxSystem
import StageboxTriggers

/// The diagnostics shell: short commands, each answering in a line or a small table that fits
/// 80 columns. It runs on whatever thread reads the terminal, never on the audio thread.
public struct Console: Sendable {
    public let context: ConsoleContext

    public init(context: ConsoleContext) {
        self.context = context
    }

    struct Command {
        let name: String
        let usage: String
        let summary: String
    }

    static let commands: [Command] = [
        .init(name: "help", usage: "help [COMMAND]", summary: "list the commands, or explain one"),
        .init(name: "status", usage: "status", summary: "state, driver, latency, DSP load, xruns, clients"),
        .init(name: "ports", usage: "ports", summary: "the ports on the bus"),
        .init(name: "connections", usage: "connections", summary: "the connections on the bus"),
        .init(name: "connect", usage: "connect FROM TO", summary: "sender/filter to filter/receiver (PORT or PORT:CH)"),
        .init(name: "disconnect", usage: "disconnect FROM TO", summary: "remove a connection (PORT or PORT:CH)"),
        .init(name: "mute", usage: "mute PORT", summary: "mute a port"),
        .init(name: "unmute", usage: "unmute PORT", summary: "unmute a port"),
        .init(name: "clients", usage: "clients", summary: "client programs with their ports, rates and glitches"),
        .init(name: "xruns", usage: "xruns", summary: "the last 32 xruns: time, kind, duration, context"),
        .init(name: "meters", usage: "meters", summary: "peak and RMS of every port channel, dBFS; a key ends it"),
        .init(name: "log", usage: "log [N]", summary: "the last N lines of the log (default 20, at most 2000)"),
        .init(name: "config", usage: "config", summary: "the configuration in effect and its problems"),
        .init(name: "trigger", usage: "trigger NAME", summary: "fire a trigger"),
        .init(name: "triggers", usage: "triggers", summary: "the triggers and their states"),
        .init(name: "record", usage: "record start|stop", summary: "start or stop a take"),
        .init(name: "slate", usage: "slate", summary: "the next take's project, scene, take, tape and note"),
        .init(name: "scene", usage: "scene NAME|-", summary: "a new scene: takes count from 1 again (- clears)"),
        .init(name: "take", usage: "take N|next", summary: "the next take's number (1 to 9999)"),
        .init(name: "note", usage: "note TEXT", summary: "a note for the next take (its iXML and bext)"),
        .init(name: "tape", usage: "tape NAME|-", summary: "the day's roll, in every take's iXML (- clears)"),
        .init(name: "project", usage: "project NAME|-", summary: "the production, in every take's iXML (- clears)"),
        .init(name: "takes", usage: "takes [copy [WHERE]]",
              summary: "last takes; copy: WHERE usb|NAME|DIR, --force; copy status"),
        .init(name: "health", usage: "health", summary: "power, heat, CPU clock, busiest other process, changes"),
        .init(name: "diag", usage: "diag bundle [DIR]", summary: "write a support bundle (to BOOT on the card)"),
        .init(name: "storage", usage: "storage [eject NAME]", summary: "media, free space, time left; eject a stick"),
        .init(name: "buttons", usage: "buttons", summary: "the buttons, their lines' levels and triggers"),
        .init(name: "midi", usage: "midi", summary: "the MIDI peers connected and the events counted"),
        .init(name: "state", usage: "state show|save|clear", summary: "the run-time changes kept across restarts ([state])"),
        .init(name: "update", usage: "update [FILE [--force]|--rollback]",
              summary: "install a bundle, or boot the other slot"),
        .init(name: "reset-stats", usage: "reset-stats", summary: "zero the statistics and the xrun list"),
        .init(name: "suspend", usage: "suspend", summary: "close the codec now (refused while in use)"),
        .init(name: "resume", usage: "resume", summary: "open the codec again"),
        .init(name: "lifecycle", usage: "lifecycle", summary: "the last lifecycle changes with times"),
        .init(name: "exit", usage: "exit", summary: "stop stagebox on its terminal, leave `stagebox console`"),
        .init(name: "quit", usage: "quit", summary: "the same as exit"),
    ]

    /// Command names and, after a command that takes ports, port names: for Tab.
    public func completions(for line: String) -> [String] {
        let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let word = words.last ?? ""
        if words.count <= 1 { return Self.commands.map(\.name).filter { $0.hasPrefix(word) } }
        switch words[0] {
        case "connect", "disconnect", "mute", "unmute":
            return context.engine.ports.map(\.name).filter { $0.hasPrefix(word) }
        case "trigger":
            return context.triggers.all.map(\.name).filter { $0.hasPrefix(word) }
        case "help":
            return Self.commands.map(\.name).filter { $0.hasPrefix(word) }
        default:
            return []
        }
    }

    /// Runs one line; returns the answer (lines joined with "\n", no trailing newline).
    public func execute(_ line: String) -> String { run(line).text }

    /// Runs one line; the answer, and whether the command failed (unknown, misused, refused).
    public func run(_ line: String) -> (text: String, failed: Bool) {
        let text = answer(line)
        let name = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
        // A change answers "ok" or why it was refused; every other failure has its own opening.
        let refused = ["connect", "disconnect", "mute", "unmute"].contains(name) && text != "ok"
        // Firing a disabled trigger did nothing: that fails too.
        let disabled = name == "trigger" && (text.hasSuffix(" is disabled") || text.hasSuffix(": error (its action failed: `log 5` says why)"))
        return (text, refused || disabled || Self.failurePrefixes.contains { text.hasPrefix($0) })
    }

    /// How the answers of commands that failed begin.
    static let failurePrefixes = ["unknown command '", "usage: ", "no command '", "no trigger named ", "log: N must", "refused: "]

    private func answer(_ line: String) -> String {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let name = words.first else { return "" }
        let args = Array(words.dropFirst())
        guard let command = Self.commands.first(where: { $0.name == name }) else {
            let near = Self.commands.map(\.name).filter { $0.hasPrefix(String(name.prefix(2))) }
            return "unknown command '\(name)'" + (near.isEmpty ? "; type help" : "; did you mean \(near.joined(separator: ", "))?")
        }
        switch (command.name, args.count) {
        case ("help", 0): return help()
        case ("help", 1): return help(args[0])
        case ("status", 0): return status()
        case ("ports", 0): return ports()
        case ("connections", 0): return connections()
        case ("connect", 2): return change { () throws(EngineError) in try context.engine.connect(from: args[0], to: args[1]) }
        case ("disconnect", 2): return change { () throws(EngineError) in try context.engine.disconnect(from: args[0], to: args[1]) }
        case ("mute", 1): return change { () throws(EngineError) in try context.engine.setMuted(args[0], true) }
        case ("unmute", 1): return change { () throws(EngineError) in try context.engine.setMuted(args[0], false) }
        case ("clients", 0): return clients()
        case ("xruns", 0): return xruns()
        case ("meters", 0): return meters()
        case ("log", 0): return context.log(last: 20).joined(separator: "\n")
        case ("log", 1):
            guard let n = Int(args[0]), n > 0 else {
                return !args[0].isEmpty && args[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                    ? "log: N must be from 1 to 2000, not \(args[0])" : "log: N must be a positive number, not '\(args[0])'"
            }
            guard n <= 2000 else { return "log: N must be from 1 to 2000 (the lines kept), not \(n)" }
            return context.log(last: n).joined(separator: "\n")
        case ("config", 0): return context.configuration.joined(separator: "\n")
        case ("trigger", 1):
            if TriggerRules.shownOnly.contains(args[0]) { return "refused: \(TriggerRuleViolation.onlyShown(args[0]))" }
            switch context.triggers.fireReporting(args[0]) {
            case .failed: return "\(args[0]): error (its action failed: `log 5` says why)"
            case .fired(let state): return "\(args[0]): \(state)"
            case .disabled: return "trigger \(args[0]) is disabled"
            case .missing:
                return "no trigger named \(args[0]); triggers: \(context.triggers.all.map(\.name).joined(separator: ", "))"
            }
        case ("triggers", 0): return triggers()
        case ("buttons", 0): return buttons()
        case ("midi", 0): return context.midi?.joined(separator: "\n") ?? "no MIDI configured (see [midi] in the README)"
        case ("exit", 0), ("quit", 0):
            // Reached only where the line is not taken first: the terminal stagebox runs in
            // stops it, `stagebox console` leaves, and a serial console says it cannot.
            return "exit and quit stop stagebox on the terminal it runs in and leave `stagebox console`; here they do nothing"
        case ("suspend", 0): return context.suspend() ?? "suspending: the outputs fade out, then the codec closes"
        case ("resume", 0): return context.resume()
        case ("lifecycle", 0):
            let lines = context.lifecycleChanges
            return lines.isEmpty ? "no changes yet" : lines.joined(separator: "\n")
        case ("record", 1) where args[0] == "start" || args[0] == "stop": return context.record(start: args[0] == "start")
        case ("diag", 1) where args[0] == "bundle": return supportBundle(into: nil)
        case ("diag", 2) where args[0] == "bundle": return supportBundle(into: args[1])
        case ("health", 0): return context.health?.joined(separator: "\n") ?? "no health thread in this stagebox"
        case ("slate", 0): return context.slate([])
        case ("scene", 1), ("tape", 1), ("project", 1): return context.slate([name, args[0]])
        case ("take", 1): return context.slate(["take", args[0]])
        case ("note", _) where !args.isEmpty:
            // The rest of the line, without the quotes a person may put around it.
            var text = args.joined(separator: " ")
            if text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first {
                text = String(text.dropFirst().dropLast())
            }
            return context.slate(["note", text])
        case ("storage", 0):
            let lines = context.storage
            return lines.isEmpty ? "no recorder configured" : lines.joined(separator: "\n")
        case ("takes", 0):
            let lines = context.takes
            return lines.isEmpty ? "no takes yet" : lines.joined(separator: "\n")
        case ("takes", 1...3) where args[0] == "copy": return context.copyTakes(Array(args.dropFirst()))
        case ("storage", 2) where args[0] == "eject": return context.eject(args[1])
        case ("state", 1) where ["show", "save", "clear"].contains(args[0]): return context.state(args[0])
        case ("update", 0): return context.update([])
        case ("update", 1) where args[0] == "--rollback": return context.update(args)
        case ("update", 1) where !args[0].hasPrefix("-"): return context.update(args)
        case ("update", 2) where args[1] == "--force" && !args[0].hasPrefix("-"): return context.update(args)
        case ("update", 2) where args[0] == "--force" && !args[1].hasPrefix("-"): return context.update([args[1], "--force"])
        case ("reset-stats", 0):
            context.statistics.reset()
            context.clearXruns()
            return "statistics reset"
        default:
            return "usage: \(command.usage)"
        }
    }

    private func change(_ body: () throws(EngineError) -> Void) -> String {
        do throws(EngineError) {
            try body()
            return "ok"
        } catch {
            return error.description
        }
    }

    private func help(_ name: String? = nil) -> String {
        if let name {
            guard let c = Self.commands.first(where: { $0.name == name }) else { return "no command '\(name)'; type help" }
            return "\(c.usage): \(c.summary)"
        }
        return Self.commands.map { $0.usage.padded(20) + "  " + $0.summary }.joined(separator: "\n")
    }

    func status() -> String {
        let s = context.statistics.snapshot()
        let c = context
        let uptime = (monotonicNanoseconds() - c.startedAt) / 1_000_000_000
        let latency = Double(c.period * c.periods) * 1000 / Double(max(1, c.sampleRate))
        var lines = [
            "version     \(c.version), up \(uptime / 3600)h \(uptime / 60 % 60)m \(uptime % 60)s, \(c.lifecycleState)",
            "driver      \(c.driver)",
            "audio       \(c.sampleRate) Hz \(c.format), \(c.period) x \(c.periods) frames = \(fixed(latency, digits: 2)) ms buffer",
            "dsp load    \(fixed(s.loadPercent, digits: 1)) % now, \(fixed(s.maxLoadPercent, digits: 1)) % max; "
                + "cycle \(fixed(Double(s.meanCycleNanos) / 1000, digits: 1)) us mean, "
                + "\(fixed(Double(s.p99CycleNanos) / 1000, digits: 1)) us p99, "
                + "\(fixed(Double(s.maxCycleNanos) / 1000, digits: 1)) us max, "
                + "\(s.cyclesOverQuarterPeriod) over a quarter period; \(s.periods) periods",
            "xruns       capture \(s.captureXruns), playback \(s.playbackXruns), late wakeups \(s.lateWakeups), "
                + "poll timeouts \(s.pollTimeouts)",
            "clients     \(c.clients.count)" + (c.ringFaults > 0 ? ", \(c.ringFaults) disconnected for corrupt shared memory" : ""),
        ]
        if let dog = c.watchdog { lines.append("watchdog    \(dog)") }
        if let recorder = c.recorderStatus { lines.append("recorder    \(recorder)") }
        if let midi = c.midiStatus { lines.append("midi        \(midi)") }
        if let update = c.updateStatus { lines.append("system      \(update)") }
        if let health = c.healthStatus { lines.append("health      \(health)") }
        return lines.joined(separator: "\n")
    }

    private func ports() -> String {
        let engine = context.engine
        let rows = engine.ports.map { p in
            [p.name, "\(p.kind)", "\(p.channels)", ((try? engine.isMuted(p.name)) ?? false) ? "muted" : ""]
        }
        return table(["PORT", "KIND", "CH", "STATE"], rows)
    }

    private func connections() -> String {
        let list = context.engine.connections
        return list.isEmpty ? "no connections" : list.map(\.description).joined(separator: "\n")
    }

    private func clients() -> String {
        let list = context.clients
        guard !list.isEmpty else { return "no clients" }
        var rows: [[String]] = []
        for client in list {
            if client.ports.isEmpty { rows.append([client.name, "\(client.pid)", "-", "", "", "", "", "", ""]) }
            for p in client.ports {
                rows.append([client.name, "\(client.pid)", p.name, "\(p.rate)", "\(p.underruns)", "\(p.overruns)", "\(p.fill)",
                             "\(p.target)", p.ratio.map { fixed($0, digits: 6) } ?? "invalid"])
            }
        }
        return table(["CLIENT", "PID", "PORT", "RATE", "UNDER", "OVER", "FILL", "TARGET", "RATIO"], rows)
    }

    private func xruns() -> String {
        let list = context.xruns.suffix(32)
        guard !list.isEmpty else { return "no xruns" }
        let start = context.startedAt
        let rows = table(["TIME", "KIND", "DURATION"], list.map { x in
            [fixed(Double(x.timeNanos - start) / 1e9, digits: 3) + " s", x.kind,
             fixed(Double(x.durationNanos) / 1e6, digits: 2) + " ms"]
        }).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // An xrun's context (health, the recorder's ring) is too long for a column: a line under it.
        var lines = [rows[0]]
        for (row, x) in zip(rows.dropFirst(), list) {
            lines.append(row)
            if !x.context.isEmpty { lines.append("  at " + x.context) }
        }
        return lines.joined(separator: "\n")
    }

    /// One line per port channel: peak and RMS in dBFS with a bar.
    public func meters() -> String {
        let engine = context.engine
        engine.watchMeters()
        var lines: [String] = []
        for p in engine.ports {
            guard let values = try? engine.meter(p.name).read() else { continue }
            for (c, v) in values.enumerated() {
                let peak = Self.dB(v.peak), rms = Self.dB(v.rms)
                let label = "\(p.name):\(c + 1)".padded(18)
                lines.append(label + " " + Self.bar(peak) + " " + Self.dBText(peak) + " pk " + Self.dBText(rms) + " rms")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func dB(_ x: Float) -> Double { x > 0 ? 20 * log10(Double(x)) : -.infinity }

    static func dBText(_ db: Double) -> String {
        db.isFinite ? fixed(max(db, -99.9), digits: 1).leftPadded(5) : " -inf"
    }

    /// 30 characters from -60 dBFS to 0.
    static func bar(_ db: Double) -> String {
        let filled = db.isFinite ? max(0, min(30, Int(((db + 60) / 2).rounded(.down)))) : 0
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "]"
    }

    private func buttons() -> String {
        let list = context.buttons
        guard !list.isEmpty else { return "no buttons configured" }
        return table(["BUTTON", "LINE", "STATE", "PRESS", "RELEASE", "LONG PRESS"], list.map { b in
            let s = b.settings
            let state = b.problem != nil ? "unavailable (see the log)" : (b.pressed == true ? "pressed" : "released")
            return [s.name, "\(s.chip):\(s.line)", state, s.press ?? "-", s.release ?? "-",
                    s.longPress.map { "\($0) (\(s.longPressNanos / 1_000_000) ms)" } ?? "-"]
        })
    }

    private func triggers() -> String {
        let list = context.triggers.all
        return list.isEmpty ? "no triggers" : table(["TRIGGER", "STATE", "TITLE"], list.map { [$0.name, $0.state.name, $0.title] })
    }

    func table(_ header: [String], _ rows: [[String]]) -> String { textTable(header, rows) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif


extension Console {
    /// The commands whose answers go into a support bundle, in its order (`meters` waits for a
    /// key; `log` is added with its 2,000 lines).
    static let bundleCommands = ["status", "config", "ports", "connections", "clients", "xruns", "health", "triggers", "slate",
                                 "buttons", "midi", "takes", "storage", "state show", "lifecycle", "update"]

    /// `diag bundle [DIR]`: every command above as it answers now, and the log.
    func supportBundle(into directory: String?) -> String {
        // Whose folder a relative path would be taken from is not the caller's to know.
        if let directory, !directory.hasPrefix("/") { return "refused: give DIR as an absolute path, not '\(directory)'" }
        var sections = Self.bundleCommands.map { command in
            (title: command, lines: run(command).text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        }
        sections.append((title: "log (the last 2000 lines)", lines: context.log(last: 2000)))
        return context.writeSupportBundle(sections, into: directory)
    }
}
