import Logging
import StageboxClock
import StageboxAudioFiles
import StageboxConfig
import StageboxEngine
import StageboxFormatting
import StageboxMedia
import StageboxRecorder
import StageboxTriggers
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The recorder and the player as the appliance runs them: built from `[recorder]`, checked
/// and repaired at start, and behind the `record`, `marker` and `play` triggers.
final class Recording: Sendable {
    let recorder: Recorder
    let player: TakePlayer
    /// `takes copy`: takes copied onto a stick after the fact, verified.
    let copier: TakeCopier
    /// USB sticks mounted when plugged (`mount_sticks`); nil where the system mounts them.
    let media: RemovableMedia?
    /// Others told of each stick mounted (the updater looks for bundles on it).
    let stickListeners = Mutex<[@Sendable (Stick) -> Void]>([])
    let triggers: TriggerBoard
    let logger: Logger
    private let clock: ClockKeeper?
    /// The take the short-time warning was logged for.
    private let warnedTake = Mutex<String?>(nil)

    /// `clock`: whether takes' times can be trusted, and saved at each take's start.
    init(_ config: StageboxConfiguration, engine: Engine, triggers: TriggerBoard, clock: ClockKeeper?, logger: Logger) {
        let section = config.recorder
        var settings = RecorderSettings(directory: section.directory, sources: section.sources,
                                        encoding: AudioFileEncoding(rawValue: section.encoding) ?? .pcm24,
                                        sampleRate: config.audio.rate, syncIntervalMs: section.syncIntervalMs,
                                        preRollSeconds: section.preRollSeconds, minFreeMB: section.minFreeMB,
                                        rf64Threshold: Self.rf64Threshold, mirror: section.mirror)
        settings.splitThreshold = getenv("STAGEBOX_SPLIT_THRESHOLD").flatMap { UInt64(String(cString: $0)) }
        settings.slate = Slate.Fields(project: section.project, scene: section.scene, tape: section.tape)
        if let clock { settings.timeTrusted = { clock.isTrusted } }
        self.clock = clock
        recorder = Recorder(settings: settings, engine: engine, logger: logger)
        player = TakePlayer(engine: engine, logger: logger)
        copier = TakeCopier(logger: logger)
        media = section.mountSticks ? RemovableMedia(root: settings.mediaRoot, logger: logger) : nil
        self.triggers = triggers
        self.logger = logger
        recorder.repairTakes()
        do {
            try recorder.startWriter()
        } catch {
            logger.error("recorder: \(error); takes are refused")
        }
        addTriggers(engine: engine)
        addCopyTrigger()
    }

    /// `STAGEBOX_RF64_THRESHOLD` lowers RF64's 4 GiB for tests that cannot write 4 GiB.
    private static var rf64Threshold: UInt64 {
        getenv("STAGEBOX_RF64_THRESHOLD").flatMap { UInt64(String(cString: $0)) } ?? UInt64(UInt32.max)
    }

    private func addTriggers(engine: Engine) {
        let recorder = recorder, player = player, triggers = triggers, logger = logger
        triggers.add(name: "record", title: "Start or stop a take") {
            if recorder.isRecording {
                recorder.stop()
                return .normal
            }
            // What can be known at once (no directory, no space) is an error at once.
            if let problem = recorder.problem() {
                logger.error("recorder: record refused: \(problem)")
                return .error
            }
            // The take's files are made by the writer: until then the trigger shows "waiting
            // for the disk", and a press is never held up by a slow disk.
            recorder.requestStart()
            return .alternate
        }
        triggers.add(name: "marker", title: "Drop a marker into the take", state: .disabled) {
            let count = (recorder.status.take?.markers ?? 0) + 1
            recorder.mark(label: "marker \(count)")
            return .normal
        }
        triggers.add(name: "play", title: "Play the last take through codec.out; again to stop") {
            if player.isPlaying {
                player.stop()
                return .normal
            }
            guard let last = recorder.recentTakes.last(where: { $0.frames > 0 }) else {
                logger.warning("player: no take to play yet")
                return .normal
            }
            switch player.play(recorder.settings.directory + "/" + last.file) {
            case .success: return .selected
            case .failure(let refusal):
                logger.error("player: \(refusal)")
                return .error
            }
        }
        triggers.add(name: "mute-out", title: "Mute the codec outputs") {
            let muted = !((try? engine.isMuted(BuiltinPort.codecOut)) ?? false)
            try? engine.setMuted(BuiltinPort.codecOut, muted)
            return muted ? .selected : .normal
        }
        let clock = clock
        recorder.onStateChange { state in
            switch state {
            case .idle:
                triggers.setState("record", .normal)
                triggers.setState("marker", .disabled)
            case .recording:
                // The take's time saved: after a power cut the clock starts after it.
                clock?.saveSoon()
                triggers.setState("record", .selected)
                triggers.setState("marker", .normal)
            case .failed:
                triggers.setState("record", .error)
                triggers.setState("marker", .disabled)
            }
        }
    }

    /// The control thread's share: taps for sources that came and went, a playback that ended.
    func tick(engine: Engine) {
        recorder.syncTaps()
        if player.tick() { triggers.setState("play", .normal) }
        // The record trigger's state follows the recorder, whichever thread was last to set it
        // (a press's action and the writer's answer can cross).
        let wanted: TriggerState
        switch recorder.status.state {
        case .recording:
            // A take whose copy failed shows the error while it goes on; one short of time alternates.
            let short = warnIfTimeIsShort()
            if case let .failed(take, _) = recorder.mirrorState, take == recorder.status.take?.name {
                wanted = .error
            } else {
                wanted = short ? .alternate : .selected
            }
        case .failed: wanted = recorder.isStarting ? .alternate : .error
        case .idle: wanted = recorder.isStarting ? .alternate : .normal
        }
        if triggers.state("record") != wanted { triggers.setState("record", wanted) }
    }

    /// Whether the take has less than ten minutes left on its medium; says so in the log once
    /// a take.
    private func warnIfTimeIsShort() -> Bool {
        guard let left = recorder.timeLeft, left.isLow, let take = recorder.status.take?.name else { return false }
        let first = warnedTake.withLock { warned in
            defer { warned = take }
            return warned != take
        }
        if first {
            logger.warning("recorder: \(left.text) of recording left in \(recorder.settings.directory) (take \(take))")
        }
        return true
    }

    var runningTakes: Int { recorder.isRecording ? 1 : 0 }

    func shutdown() {
        player.stop()
        recorder.shutdown()
        media?.stop() // last: a check of a stick in progress (at most its time limit) holds up nothing else
    }

    // MARK: the console

    func record(start: Bool) -> String {
        if start {
            if recorder.isRecording { return "refused: already recording take \(recorder.status.take?.name ?? "")" }
            switch recorder.start() {
            case .success(let take):
                triggers.setState("record", .selected)
                return "recording take \(take.name): " + take.files.joined(separator: ", ")
            case .failure(let refusal):
                return "refused: \(refusal.reason)"
            }
        }
        guard let take = recorder.status.take, recorder.stop() else { return "refused: no take is running" }
        // The console waits for the files to be whole, so that a script's next line finds them so.
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while recorder.isRecording && monotonicNanoseconds() < deadline { usleep(5000) }
        guard !recorder.isRecording else { return "stopping take \(take.name): its files are still being finished" }
        let ended = recorder.recentTakes.last { $0.file.hasPrefix(take.name) }
        return "stopped take \(take.name) after \(fixed(ended?.seconds ?? take.seconds, digits: 1)) s"
            + (ended?.note.map { ": \($0)" } ?? "")
    }

    var takes: [String] {
        let rows = recorder.recentTakes.suffix(10).map { t in
            [t.file, fixed(t.seconds, digits: 1) + " s", Self.size(t.bytes), t.note ?? ""]
        }
        // Never cut: a repair's note is the point of the list.
        var lines = rows.isEmpty ? [] : [textTable(["TAKE", "LENGTH", "SIZE", "NOTE"], rows, width: .max)]
        if let take = recorder.status.take { lines.append("recording \(take.name): \(fixed(take.seconds, digits: 1)) s") }
        return lines
    }

    var statusLine: String {
        let s = recorder.status
        if s.state != .recording, let problem = recorder.problem() { return "cannot record: \(problem)" }
        let left = recorder.timeLeft.map { ", \($0.text) of recording left" } ?? ""
        let free = s.freeBytes.map { Self.size($0) + " free in \(recorder.settings.directory)" + left } ?? recorder.settings.directory
        switch s.state {
        case .recording:
            guard let take = s.take else { return "recording; \(free)" }
            let dropped = take.droppedFrames > 0 ? ", \(take.droppedFrames) frames dropped" : ""
            return "recording \(take.name): \(fixed(take.seconds, digits: 1)) s, \(Self.size(take.bytes))\(dropped); \(free)" + mirrorNote
        case .idle: return "idle; \(free)" + mirrorNote
        case .failed(let why): return "error: \(why); \(free)" + mirrorNote
        }
    }

    /// What the mirror is doing, for `status`; empty with no mirror.
    private var mirrorNote: String {
        switch recorder.mirrorState {
        case .idle: recorder.settings.mirror.isEmpty ? "" : "; mirror \(recorder.settings.mirror): no take yet"
        case let .copying(_, directory): "; copying to \(directory)"
        case let .copied(take, directory): "; take \(take) copied to \(directory)"
        case let .failed(take, why): "; mirror failed for take \(take): \(why)"
        }
    }

    /// `storage`: every medium takes can go to, with its filesystem, size, free space and the
    /// recording time left on it; then what a second of recording costs.
    var storage: [String] {
        var rows: [[String]] = []
        if let (medium, left) = recorder.medium() {
            rows.append([medium.path, medium.filesystem, Self.size(medium.sizeBytes), Self.size(medium.freeBytes),
                         left?.text ?? "-"])
        } else {
            rows.append([recorder.settings.directory, "-", "-", "-", "missing"])
        }
        switch MirrorTarget.resolve(recorder.settings.mirror, mediaRoot: recorder.settings.mediaRoot,
                                    mainDirectory: recorder.settings.directory, create: false) {
        case .success(let directory)?:
            if let medium = Medium(path: directory) {
                // The mirror keeps no reserve: it writes until its medium is full.
                let left = RecordTimeLeft(freeBytes: medium.freeBytes, reserveBytes: 0, bytesPerSecond: recorder.bytesPerSecond)
                rows.append([directory + " (mirror)", medium.filesystem, Self.size(medium.sizeBytes), Self.size(medium.freeBytes),
                             left?.text ?? "-"])
            }
        case .failure(let refusal)?: rows.append(["mirror " + recorder.settings.mirror, "-", "-", "-", refusal.reason])
        case nil: break
        }
        // The other sticks: where `takes copy` can go, or a mirror could.
        let listed = rows.map { String($0[0].split(separator: " ").first ?? "") }
        for stick in media?.sticks ?? [] where !listed.contains(where: { $0.isInside(stick.mountPoint) }) {
            guard let medium = Medium(path: stick.mountPoint) else { continue }
            let left = RecordTimeLeft(freeBytes: medium.freeBytes, reserveBytes: 0, bytesPerSecond: recorder.bytesPerSecond)
            rows.append([stick.mountPoint + (stick.readOnly ? " (read-only)" : ""), medium.filesystem, Self.size(medium.sizeBytes),
                         Self.size(medium.freeBytes), stick.readOnly ? "-" : left?.text ?? "-"])
        }
        for (device, reason) in media?.refusals ?? [] { rows.append(["/dev/" + device, "-", "-", "-", "not mounted: " + reason]) }
        let rate = recorder.bytesPerSecond
        let costs = rate > 0
            ? "recording \(recorder.settings.encoding.rawValue) at \(recorder.settings.sampleRate) Hz writes "
                + Self.size(UInt64(rate)) + " a second; \(Self.size(recorder.settings.minFreeBytes)) is kept free (min_free_mb)"
            : "no recorder source is on the bus (\(recorder.settings.sources.joined(separator: ", "))): no time to tell"
        return [textTable(["MEDIUM", "FS", "SIZE", "FREE", "TIME LEFT"], rows, width: .max), costs] + (copyStatus.map { [$0] } ?? [])
    }

    /// In units of 1000, as `min_free_mb` counts; gigabytes from 10 GB.
    private static func size(_ bytes: UInt64) -> String {
        if bytes >= 10_000_000_000 { return fixed(Double(bytes) / 1_000_000_000, digits: 1) + " GB" }
        return bytes >= 1_000_000 ? fixed(Double(bytes) / 1_000_000, digits: 1) + " MB" : fixed(Double(bytes) / 1000, digits: 1) + " kB"
    }
}

extension Recording {
    /// The console's slate commands: `slate` shows it, the others set a field and show it.
    func slate(_ words: [String]) -> String {
        let slate = recorder.slate
        guard let field = words.first, words.count == 2 else { return "next take: \(slate.line)" }
        var value = words[1]
        if ["project", "scene", "tape"].contains(field) {
            // `-` clears a field; quotes around a value are a person's, not the value's ("-" is a dash).
            if value == "-" {
                value = ""
            } else if value.count >= 2, let q = value.first, q == "\"" || q == "'", value.last == q {
                value = String(value.dropFirst().dropLast())
            }
        }
        if let problem = SlateText.problem(value, field: field) { return "refused: \(field) \(problem)" }
        switch field {
        case "scene": slate.setScene(value)
        case "tape": slate.setTape(value)
        case "project": slate.setProject(value)
        case "note": slate.setNote(value)
        case "take":
            if value == "next" {
                guard slate.current.take < 9999 else { return "refused: take 9999 is the last; set another scene or take number" }
                slate.setTake(slate.current.take + 1)
            } else if let n = Int(value), n >= 1, n <= 9999 {
                slate.setTake(n)
            } else {
                return "refused: take wants a number from 1 to 9999, or next, not '\(value)'"
            }
        default: return "refused: no slate field \(field)"
        }
        return "next take: \(slate.line)"
    }
}
