import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The recorder's writer thread: takes what the taps' rings hold into the take's files (or,
/// between takes, into the pre-roll), syncs them every `syncIntervalMs`, and carries out the
/// control side's commands. Everything here runs on that one thread.
final class TakeWriter: @unchecked Sendable {
    // @unchecked: created on the control thread and then used only by the writer thread.
    private let recorder: Recorder
    private var settings: RecorderSettings { recorder.settings }
    private var take: Take?
    private var preRolls: [String: PreRoll] = [:]
    private var scratch: [Float] = []
    private var rounds = 0
    /// How long the writer sleeps between rounds while it has audio to move (a take or a
    /// pre-roll): short against the taps' 5 s rings, long against the CPU.
    private static let roundNanos: Int64 = 10_000_000
    /// How long it sleeps with nothing to move: commands wake it at once (`Recorder.wake`), so
    /// this only refreshes the published status. An idle appliance should not wake 100 times a
    /// second for a recorder nobody uses.
    private static let idleNanos: Int64 = 1_000_000_000

    private struct Take {
        var name: String
        var files: [(tap: RecorderTap, file: TakeParts, droppedSeen: Int)]
        var nextSync: Int64
        var askedNanos: Int64
        var latencyReported = false
        var preRollFrames = 0
        var droppedFrames = 0
        var markers = 0
        /// The copy on the mirror's medium, handed every frame written here.
        var copy: MirrorCopy?
        /// Whether the wall clock was trusted at the start (NTP or an RTC had set it).
        var timeTrusted = true
    }

    init(recorder: Recorder) { self.recorder = recorder }

    /// One round of the writer's loop; returns when the next is due at the latest.
    func round() -> Int64 {
        moveAndCommand()
        let busy = take != nil || settings.preRollFrames > 0
        return monotonicNanoseconds() + (busy ? Self.roundNanos : Self.idleNanos)
    }

    /// The last round, once the loop has ended: a running take is made whole.
    func finish() {
        moveAndCommand()
        if take != nil { end(reason: nil) }
    }

    private func moveAndCommand() {
        let commands = recorder.shared.withLock { s in
            defer { s.commands.removeAll() }
            return s.commands
        }
        for command in commands {
            switch command {
            case let .start(asked): begin(askedNanos: asked)
            case let .stop(reason): if take != nil { end(reason: reason) }
            case let .mark(label): mark(label)
            }
        }
        pump()
        if let t = take, monotonicNanoseconds() >= t.nextSync { syncTake() }
        publish()
    }

    // MARK: starting and ending

    private func begin(askedNanos: Int64) {
        func refuse(_ reason: String) {
            recorder.logger.error("recorder: record refused: \(reason)")
            recorder.announce(.failed(reason), answer: .failure(.init(reason: reason)))
        }
        if let t = take {
            let running = RunningTake(name: t.name, files: t.files.map { $0.file.path }, frames: 0, bytes: 0,
                                      seconds: 0, droppedFrames: 0, markers: 0)
            recorder.shared.withLock { $0.startAnswer = .success(running) }
            return
        }
        if let problem = recorder.problem() { return refuse(problem) }
        let taps = recorder.taps.withLock { $0 }
        let present = settings.sources.compactMap { taps[$0] }
        let absent = settings.sources.filter { taps[$0] == nil }
        if !present.isEmpty && !absent.isEmpty {
            let recorded = present.map(\.source).joined(separator: ", ")
            recorder.logger.warning("recorder: \(absent.joined(separator: ", ")) not on the bus: this take records \(recorded) only")
        }
        guard !present.isEmpty else {
            return refuse("none of the sources is on the bus (\(settings.sources.joined(separator: ", "))); "
                + "a take records senders and filters")
        }
        // The pre-roll ends where the start was asked: take in what the rings hold first.
        pump()
        let preRollFrames = present.map { preRolls[$0.source]?.frames ?? 0 }.max() ?? 0
        let clock = WallClock.now(minusSeconds: Double(preRollFrames) / Double(settings.sampleRate))
        // The gates open before the files are made: the rings hold the first seconds while the
        // disk creates them, so a slow disk does not delay the take's first sample.
        // What the rings drop from here on (a slow disk making the files) counts for this take.
        let droppedBefore = Dictionary(present.map { ($0.source, $0.droppedFrames.load(ordering: .relaxed)) },
                                       uniquingKeysWith: { a, _ in a })
        if settings.preRollFrames == 0 {
            for tap in present {
                discard(tap) // the gate was shut: anything left is from before this take
                tap.firstFrameNanos.store(0, ordering: .relaxed)
                tap.open.store(true, ordering: .releasing)
            }
        }
        let sequence: Int
        do { sequence = try recorder.directory.nextSequence() } catch {
            shut(present)
            return refuse("\(error)")
        }
        let base = TakeName.make(year: clock.year, month: clock.month, day: clock.day, hour: clock.hour,
                                 minute: clock.minute, sequence: sequence, source: "")
        let name = String(base.dropLast(5)) // without "_.wav"
        var files: [(tap: RecorderTap, file: TakeParts, droppedSeen: Int)] = []
        var bexts: [BroadcastInfo] = [] // each file's, for its copy
        let slate = recorder.slate.takeStarts()
        let timeTrusted = settings.timeTrusted()
        let timeReference = UInt64(clock.secondsSinceMidnight * Double(settings.sampleRate))
        let limit = settings.fileSizeLimit(of: settings.directory)
        for tap in present {
            let file = TakeName.make(year: clock.year, month: clock.month, day: clock.day, hour: clock.hour,
                                     minute: clock.minute, sequence: sequence, source: tap.source)
            let ixml = IXML(project: slate.project, scene: slate.scene, take: slate.take, tape: slate.tape, note: slate.note,
                            trackNames: (1...tap.ring.channels).map { "\(tap.source) \($0)" },
                            timeReference: timeReference, sampleRate: settings.sampleRate)
            let bext = BroadcastInfo(description: Self.description(sequence: sequence, source: tap.source, slate: slate,
                                                                   timeTrusted: timeTrusted),
                                     originatorReference: name, date: clock.date, time: clock.time,
                                     timeReference: timeReference, ixml: ixml)
            do {
                let take = try TakeParts(path: settings.directory + "/" + file,
                                         format: TakeFormat(sampleRate: settings.sampleRate, channels: tap.ring.channels,
                                                            encoding: settings.encoding),
                                         bext: bext, rf64Threshold: settings.rf64Threshold, limit: limit)
                files.append((tap, take, droppedBefore[tap.source] ?? 0))
                bexts.append(bext)
            } catch {
                for f in files { try? f.file.close(); unlink(f.file.path) }
                shut(present)
                return refuse("\(error)")
            }
        }
        let copy = mirrorCopy(name: name, files: zip(files, bexts).map { ($0.file, $1) })
        var preRollFailure: String?
        if settings.preRollFrames > 0 {
            for (index, f) in files.enumerated() {
                preRolls[f.tap.source]?.drain { p, n in
                    guard preRollFailure == nil else { return }
                    do throws(SystemCallError) { try f.file.append(p, frames: n) } catch { preRollFailure = Self.describe(error) }
                    if preRollFailure == nil { copy?.hand(index, p, frames: n) }
                }
            }
        }
        let interval = Int64(settings.syncIntervalMs) * 1_000_000
        take = Take(name: name, files: files, nextSync: monotonicNanoseconds() + interval, askedNanos: askedNanos,
                    preRollFrames: preRollFrames, copy: copy, timeTrusted: timeTrusted)
        let running = RunningTake(name: name, files: files.map { $0.file.path }, frames: 0, bytes: 0,
                                  seconds: 0, droppedFrames: 0, markers: 0)
        // The running take is published before the answer: whoever was answered "recording"
        // (a console script's next `record stop`) finds the take in the status at once.
        recorder.shared.withLock { $0.status.startLatencyMs = nil; $0.status.take = running }
        recorder.logger.info("recorder: take \(name) started: \(files.map { $0.file.path }.joined(separator: ", "))")
        recorder.announce(.recording, answer: .success(running))
        if let preRollFailure { end(reason: "writing the pre-roll: \(preRollFailure)") }
    }

    /// Ends the take: with `reason` (a full disk), as a failure the record trigger shows.
    private func end(reason: String?) {
        guard let t = take else { return }
        if settings.preRollFrames == 0 {
            for f in t.files { f.tap.open.store(false, ordering: .releasing) }
            // Wait for the audio thread to see the gate shut (two periods at most while it
            // runs), so the last frames of the take are in the ring; a stopped codec never answers.
            let deadline = monotonicNanoseconds() + 200_000_000
            while t.files.contains(where: { $0.tap.seenOpen.load(ordering: .acquiring) }) && monotonicNanoseconds() < deadline {
                sleepUntil(monotonicNanos: monotonicNanoseconds() + 1_000_000)
            }
        }
        var failure = reason
        if failure == nil { failure = pumpTake() }
        if let copy = t.copy { recorder.mirror?.end(copy) } // after the last frame was handed
        var summaries: [TakeSummary] = []
        for f in t.files {
            do { try f.file.close() } catch { failure = failure ?? "\(error)" }
            let file = String(f.file.path.split(separator: "/").last ?? "")
            var note = failure ?? (t.timeTrusted ? nil : Self.untrustedTime)
            if f.file.cuesRefused > 0 {
                recorder.logger.warning("recorder: \(f.file.path): \(f.file.cuesRefused) markers found no room in their part (100 a file)")
            }
            if f.file.paths.count > 1 {
                let parts = "in \(f.file.paths.count) parts (the medium's files stop at \(f.file.limit ?? 0) bytes)"
                note = note.map { $0 + "; " + parts } ?? parts
            }
            summaries.append(TakeSummary(file: file, frames: f.file.frames,
                                         seconds: Double(f.file.frames) / Double(settings.sampleRate),
                                         bytes: f.file.paths.reduce(0) { $0 + fileSize($1) }, note: note))
        }
        take = nil
        recorder.shared.withLock { s in
            s.recent.append(contentsOf: summaries)
            if s.recent.count > Recorder.recentLimit { s.recent.removeFirst(s.recent.count - Recorder.recentLimit) }
            s.status.take = nil
        }
        let length = summaries.first.map { "\(formatSeconds($0.seconds)) s" } ?? ""
        if let failure {
            recorder.logger.error("recorder: take \(t.name) ended after \(length): \(failure); its files are whole")
            recorder.announce(.failed(failure))
        } else {
            recorder.logger.info("recorder: take \(t.name) ended after \(length)")
            recorder.announce(.idle)
        }
    }

    private func mark(_ label: String) {
        guard var t = take else { return }
        for (index, f) in t.files.enumerated() {
            let at = f.file.frames + Int64(f.tap.ring.availableFrames)
            t.copy?.cues.withLock { $0.append((index, at, label)) } // each file's own position
            if !f.file.addCue(frame: at, label: label) {
                recorder.logger.warning("recorder: no room for another marker in \(f.file.path) (\(f.file.cueCount) kept)")
            }
        }
        t.markers += 1
        take = t
        recorder.logger.info("recorder: marker '\(label)' in take \(t.name)")
    }

    /// The take's copy on the mirror's medium, handed to the mirror's thread, which finds the
    /// directory and makes the files (never this thread: a stick that hangs must not hold up
    /// the take); nil with no mirror.
    /// `bext`'s description: the take and its source, with the slate when there is one
    /// ("Stagebox take 12 of codec.in; scene 4A take 3: a plane passes").
    static func description(sequence: Int, source: String, slate: Slate.Fields, timeTrusted: Bool = true) -> String {
        var text = "Stagebox take \(sequence) of \(source)"
        if !slate.scene.isEmpty { text += "; scene \(slate.scene) take \(slate.take)" }
        if !slate.note.isEmpty { text += (slate.scene.isEmpty ? "; " : ": ") + slate.note }
        if !timeTrusted { text += " (\(untrustedTime))" }
        return text
    }

    /// Said of a take made while the wall clock was not set by NTP or an RTC.
    static let untrustedTime = "time not confirmed: the clock was not set by NTP or an RTC"

    private func mirrorCopy(name: String, files: [(file: TakeParts, bext: BroadcastInfo)]) -> MirrorCopy? {
        guard let mirror = recorder.mirror else { return nil }
        let plans = files.map { f in
            MirrorCopy.Plan(file: String(f.file.path.split(separator: "/").last ?? ""), format: f.file.format, bext: f.bext)
        }
        let copy = MirrorCopy(name: name, plans: plans, ringSeconds: settings.mirrorRingSeconds)
        mirror.begin(copy)
        return copy
    }

    // MARK: moving audio

    /// Moves what the rings hold: into the take, or into the pre-roll between takes.
    private func pump() {
        if take != nil {
            if let failure = pumpTake() { end(reason: failure) }
            return
        }
        guard settings.preRollFrames > 0 else { return }
        for tap in recorder.taps.withLock({ Array($0.values) }) {
            var preRoll = preRolls[tap.source] ?? PreRoll(channels: tap.ring.channels, frames: settings.preRollFrames)
            if preRoll.channels != tap.ring.channels { preRoll = PreRoll(channels: tap.ring.channels, frames: settings.preRollFrames) }
            readAll(tap) { p, n in preRoll.append(p, frames: n) }
            preRolls[tap.source] = preRoll
        }
    }

    /// Moves the rings into the take's files; the reason when a file cannot take more.
    private func pumpTake() -> String? {
        guard var t = take else { return nil }
        defer { take = t }
        for i in t.files.indices {
            let f = t.files[i]
            let dropped = f.tap.droppedFrames.load(ordering: .relaxed)
            if dropped > f.droppedSeen {
                let lost = dropped - f.droppedSeen
                // The ring was full when they were dropped: the gap is after what it holds now.
                let at = f.file.frames + Int64(f.tap.ring.availableFrames)
                f.file.addCue(frame: at, label: "dropped \(lost) frames")
                t.copy?.cues.withLock { $0.append((i, at, "dropped \(lost) frames")) }
                t.files[i].droppedSeen = dropped
                t.droppedFrames += lost
                recorder.logger.warning("recorder: \(f.file.path): the disk fell behind; \(lost) frames dropped at \(at) (marked with a cue)")
            }
            var failure: String?
            readAll(f.tap) { p, n in
                guard failure == nil else { return }
                do throws(SystemCallError) { try f.file.append(p, frames: n) } catch { failure = Self.describe(error) }
                if failure == nil { t.copy?.hand(i, p, frames: n) }
            }
            if let failure { return failure }
            if !t.latencyReported, t.preRollFrames > 0 || f.tap.firstFrameNanos.load(ordering: .relaxed) != 0 {
                // With a pre-roll the take's first sample is the pre-roll's, from before the start.
                let ms = t.preRollFrames > 0 ? -Double(t.preRollFrames) / Double(settings.sampleRate) * 1000
                    : Double(f.tap.firstFrameNanos.load(ordering: .relaxed) - t.askedNanos) / 1e6
                t.latencyReported = true
                recorder.shared.withLock { $0.status.startLatencyMs = ms }
                recorder.logger.info(ms < 0 ? "recorder: take \(t.name): first sample \(formatSeconds(-ms)) ms before the start was asked (the pre-roll)"
                    : "recorder: take \(t.name): first sample \(formatSeconds(ms)) ms after the start was asked")
            }
        }
        return nil
    }

    private func readAll(_ tap: RecorderTap, into sink: (UnsafePointer<Float>, Int) -> Void) {
        let chunk = 4096
        if scratch.count < chunk * tap.ring.channels { scratch = [Float](repeating: 0, count: chunk * tap.ring.channels) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            while true {
                let n = tap.ring.read(into: buffer.baseAddress!, maxFrames: chunk)
                if n == 0 { break }
                sink(UnsafePointer(buffer.baseAddress!), n)
            }
        }
    }

    private func discard(_ tap: RecorderTap) { readAll(tap) { _, _ in } }

    /// Closes the gates a refused start opened, and drops what came through.
    private func shut(_ taps: [RecorderTap]) {
        guard settings.preRollFrames == 0 else { return }
        for tap in taps { tap.open.store(false, ordering: .releasing) }
        let deadline = monotonicNanoseconds() + 200_000_000
        while taps.contains(where: { $0.seenOpen.load(ordering: .acquiring) }) && monotonicNanoseconds() < deadline {
            sleepUntil(monotonicNanos: monotonicNanoseconds() + 1_000_000)
        }
        for tap in taps { discard(tap) }
    }

    // MARK: syncing

    private func syncTake() {
        guard var t = take else { return }
        for f in t.files {
            do throws(SystemCallError) { try f.file.sync() } catch {
                return end(reason: Self.describe(error))
            }
        }
        t.nextSync = monotonicNanoseconds() + Int64(settings.syncIntervalMs) * 1_000_000
        take = t
        if let free = recorder.directory.freeBytes(), free < settings.minFreeBytes {
            end(reason: "\(settings.directory) is down to \(megabytes(free)) MB free, below min_free_mb "
                + "(\(settings.minFreeBytes / 1_000_000))")
        }
    }

    private func publish() {
        let running = take.map { t in
            let frames = t.files.first?.file.frames ?? 0
            return RunningTake(name: t.name, files: t.files.map { $0.file.path }, frames: frames,
                               bytes: t.files.reduce(0) { $0 + $1.file.fileBytes },
                               seconds: Double(frames) / Double(settings.sampleRate),
                               droppedFrames: t.droppedFrames, markers: t.markers)
        }
        rounds += 1
        let free = rounds % 20 == 1 ? recorder.directory.freeBytes() : nil
        recorder.shared.withLock { s in
            s.status.take = running
            if let free { s.status.freeBytes = free }
        }
    }

    private static func describe(_ error: SystemCallError) -> String {
        error.errno == .noSpace ? "the disk is full (\(error))" : "\(error)"
    }
}

func formatSeconds(_ s: Double) -> String {
    let tenths = Int((s * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
