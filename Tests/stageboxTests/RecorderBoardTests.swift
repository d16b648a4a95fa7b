import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The recorder in `stagebox run --simulate`, driven as a user would: the console's `record`,
/// the triggers, `takes`, `status`, a kill mid-take and the next start's repair.
@Suite(.serialized) struct RecorderBoardTests {
    private func console(_ board: SimulatedBoard, _ line: String) -> String {
        ((try? board.stagebox(["console", "--execute", line]).stdout) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func state(_ board: SimulatedBoard, _ trigger: String) -> String {
        console(board, "triggers").split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            .first { $0.first == trigger }?.dropFirst().first ?? "?"
    }

    /// The running take's length on disk, as `status` says it ("recording NAME: 1.6 s, …").
    private func takeSeconds(_ board: SimulatedBoard) -> Double? {
        guard let line = console(board, "status").split(separator: "\n").first(where: { $0.contains("recording 2") }),
              let colon = line.firstIndex(of: ":") else { return nil }
        return Double(line[line.index(after: colon)...].split(separator: " ").first ?? "")
    }

    /// Until the take holds `seconds` of audio on disk (a loaded machine's writer lags; it
    /// never loses anything).
    private func waitForTake(_ board: SimulatedBoard, seconds: Double) -> Double? {
        var got: Double?
        _ = waitFor(60) { got = takeSeconds(board); return (got ?? 0) >= seconds }
        return got
    }

    private func recorderConfig(_ directory: String, extra: String = "") -> String {
        """
        [recorder]
        directory = "\(directory)"
        source = "tone"
        encoding = "PCM_16"
        \(extra)

        [[connect]]
        from = "codec.in"
        to = "codec.out"
        """
    }

    /// A take of the tone keeps the codec from suspending; when it ends the codec suspends;
    /// `play` plays it through codec.out (waking the codec), and its trigger goes back to normal
    /// at the take's end.
    @Test func aTakeIsRecordedKeepsTheBusInUseAndPlaysBack() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        let output = takes.path("out.wav")
        let board = try SimulatedBoard(config: recorderConfig(takes.path("takes")) + "\n[lifecycle]\nsuspend_after = 1\nfade_ms = 5\n",
                                       arguments: ["--input-signal", "silence", "--output", output])
        var log = ""
        defer { if log.isEmpty { log = board.stop() } }
        #expect(state(board, "marker") == "disabled")
        #expect(console(board, "trigger marker") == "trigger marker is disabled")
        let started = console(board, "record start")
        #expect(started.hasPrefix("recording take "), "\(started)")
        #expect(state(board, "record") == "selected" && state(board, "marker") == "normal")
        #expect(console(board, "trigger marker") == "marker: normal")
        usleep(2_500_000) // past suspend_after: the take keeps the codec running
        let status = console(board, "status")
        #expect(status.contains("running: recording"), "\(status)")
        #expect(status.split(separator: "\n").contains { $0.hasPrefix("recorder    recording ") && $0.contains(" free in ") }, "\(status)")
        #expect(console(board, "record stop").hasPrefix("stopped take "))
        #expect(waitFor(30) { state(board, "record") == "normal" })
        let list = console(board, "takes")
        #expect(list.contains("_0001_tone.wav"), "\(list)")
        #expect(waitFor(30) { console(board, "status").contains("suspended: not in use") }, "the codec did not suspend after the take")

        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: takes.path("takes")).first { $0.hasSuffix(".wav") })
        let take = try AudioFileReader(path: takes.path("takes") + "/" + file)
        #expect(take.frames > 48000 * 2 && take.channels == 1)
        #expect(console(board, "trigger play") == "play: selected")
        #expect(waitFor(20) { state(board, "play") == "normal" }, "play did not end with the take")
        log = board.stop()
        #expect(log.contains("player: ") && log.contains("played to its end"), "\(log)")
        // The outputs carried the take's tone while it played, and silence before.
        let played = try AudioFileReader(path: output).readAll()
        let loud = played.indices.filter { abs(played[$0]) > 0.05 }
        #expect(!loud.isEmpty, "the take was not heard at codec.out")
        let heard = Double((loud.last ?? 0) - (loud.first ?? 0)) / 2 / 48000
        #expect(abs(heard - Double(take.frames) / 48000) < 0.2, "heard \(heard) s of a \(Double(take.frames) / 48000) s take")
    }

    /// A stagebox killed mid-take leaves a file whose header lags: the next start repairs it,
    /// logs it, lists it in `takes`, and sox reads every frame.
    @Test func aTakeCutByAKillIsRepairedAtTheNextStart() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        let config = recorderConfig(takes.path("takes"), extra: "sync_interval_ms = 10000")
        let first = try SimulatedBoard(config: config)
        #expect(console(first, "record start").hasPrefix("recording take "))
        let written = try #require(waitForTake(first, seconds: 1.5), "the take never reached 1.5 s")
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        first.scratch.remove()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: takes.path("takes")).first { $0.hasSuffix(".wav") })

        let second = try SimulatedBoard(config: config)
        #expect(waitFor(30) { console(second, "takes").contains(file) })
        let listed = console(second, "takes")
        #expect(listed.contains("repaired: the header said 0 frames, the file holds "), "\(listed)")
        let log = second.stop()
        #expect(log.contains("recorder: \(takes.path("takes"))/\(file) repaired: the header said 0 frames"), "\(log)")
        let reader = try AudioFileReader(path: takes.path("takes") + "/" + file)
        // Everything the recorder had written before the kill is in the repaired file.
        #expect(Double(reader.frames) >= (written - 0.1) * 48000, "\(reader.frames) frames, \(written) s written")
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        sox.arguments = ["--i", "-s", takes.path("takes") + "/" + file]
        sox.standardOutput = Pipe()
        try sox.run()
        sox.waitUntilExit()
        #expect(Int(output(of: sox).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == reader.frames)
    }

    /// A take past RF64's threshold (lowered for the test: 4 GiB would take hours here) goes on
    /// without a gap as RF64, and sox reads every frame.
    @Test func aLongTakeBecomesRF64() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        let board = try SimulatedBoard(speed: 4, config: recorderConfig(takes.path("takes")),
                                       environment: ["STAGEBOX_RF64_THRESHOLD": "500000"])
        #expect(console(board, "record start").hasPrefix("recording take "))
        // 6 s of PCM_16 mono is 576 000 bytes, past the threshold.
        #expect(waitForTake(board, seconds: 6) != nil)
        #expect(console(board, "record stop").hasPrefix("stopped take "))
        #expect(waitFor(30) { state(board, "record") == "normal" })
        _ = board.stop()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: takes.path("takes")).first { $0.hasSuffix(".wav") })
        let path = takes.path("takes") + "/" + file
        let head = try #require(FileManager.default.contents(atPath: path))
        #expect(String(decoding: head.prefix(4), as: UTF8.self) == "RF64")
        let reader = try AudioFileReader(path: path)
        #expect(reader.frames > 48000 * 5)
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        sox.arguments = ["--i", "-s", path]
        sox.standardOutput = Pipe()
        try sox.run()
        sox.waitUntilExit()
        #expect(Int(output(of: sox).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == reader.frames)
    }

    /// A script's lines follow each other: `record stop` answers once the files are whole, so
    /// the next `record start` makes a new take.
    @Test func takesBackToBackInOneScript() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        let board = try SimulatedBoard(config: recorderConfig(takes.path("takes")))
        defer { _ = board.stop() }
        let answers = console(board, "record start;record stop;record start;record stop").split(separator: "\n")
        #expect(answers.count == 4 && answers[0].hasPrefix("recording take ") && answers[2].hasPrefix("recording take "), "\(answers)")
        #expect(answers[1].hasPrefix("stopped take ") && answers[3].hasPrefix("stopped take "), "\(answers)")
        let files = try FileManager.default.contentsOfDirectory(atPath: takes.path("takes")).filter { $0.hasSuffix(".wav") }.sorted()
        #expect(files.count == 2 && files[0].contains("_0001_") && files[1].contains("_0002_"), "\(files)")
    }

    /// Where takes cannot go, `status` says why before anyone presses record, and `record`
    /// (the trigger too) is refused with the reason; the audio runs on.
    @Test func statusAndRecordSayWhyTakesCannotBeMade() throws {
        let board = try SimulatedBoard(config: recorderConfig("/nonexistent-stagebox-parent/takes"))
        defer { _ = board.stop() }
        let status = console(board, "status")
        #expect(status.contains("recorder    cannot record: /nonexistent-stagebox-parent/takes: No such file or directory"), "\(status)")
        #expect(console(board, "record start") == "refused: /nonexistent-stagebox-parent/takes: No such file or directory")
        #expect(console(board, "trigger record") == "record: error (its action failed: `log 5` says why)")
        #expect(waitFor(30) { console(board, "status").contains("running") }, "the audio runs on")
    }

    /// A take of minutes, as people record (two minutes of audio at 8 times real time): every
    /// frame reaches the file, nothing is dropped, and sox reads it whole. At 16 times, the
    /// recorder's 5 s ring was 0.31 s of the machine's time, and CI's loaded machine once held
    /// the writer longer than that (the static binary's run, 20 suites at once): the recorder
    /// said so ("the disk fell behind"), as it should. It runs alone (tools/test's ALONE).
    @Test func aTakeOfMinutesKeepsEveryFrame() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        let board = try SimulatedBoard(speed: 8, config: recorderConfig(takes.path("takes"), extra: "sync_interval_ms = 100"))
        #expect(console(board, "record start").hasPrefix("recording take "))
        #expect((waitForTake(board, seconds: 120) ?? 0) >= 120, "two minutes of audio") // 15 s at 8 times
        let stopped = console(board, "record stop")
        #expect(stopped.hasPrefix("stopped take "), "\(stopped)")
        let log = board.stop()
        #expect(!log.contains("dropped"), "\(log)")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: takes.path("takes")).first { $0.hasSuffix(".wav") })
        let path = takes.path("takes") + "/" + file
        let reader = try AudioFileReader(path: path)
        #expect(reader.frames > 48000 * 100, "\(reader.frames) frames")
        // The tone is continuous: no period of the take is silent (nothing dropped, nothing zeroed).
        let samples = try reader.readAll()
        let silentPeriods = stride(from: 0, to: samples.count - 64, by: 64).filter { i in samples[i..<i + 64].allSatisfy { $0 == 0 } }
        #expect(silentPeriods.isEmpty, "\(silentPeriods.count) silent periods")
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        sox.arguments = ["--i", "-s", path]
        sox.standardOutput = Pipe()
        try sox.run()
        sox.waitUntilExit()
        #expect(Int(output(of: sox).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == reader.frames)
    }

    /// Under ten minutes of recording left, a take logs it once and its record trigger
    /// alternates. The reserve (`min_free_mb`) is set 40 MB under the free space: 40 MB of the
    /// tone as PCM_16 mono is under 7 minutes.
    @Test func aTakeShortOfTimeSaysSoInTheLog() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        var vfs = statvfs()
        #expect(statvfs(takes.path(""), &vfs) == 0)
        let reserve = Int(UInt64(vfs.f_bavail) * UInt64(vfs.f_frsize) / 1_000_000) - 40
        let board = try SimulatedBoard(config: recorderConfig(takes.path("takes"), extra: "min_free_mb = \(reserve)"))
        #expect(console(board, "record start").hasPrefix("recording take "))
        #expect(waitFor(30) { state(board, "record") == "alternate" }, "\(console(board, "triggers"))")
        #expect(console(board, "storage").contains(" min"), "\(console(board, "storage"))")
        #expect(console(board, "record stop").hasPrefix("stopped take "))
        let log = board.stop()
        let warnings = log.components(separatedBy: "of recording left in \(takes.path("takes")) (take ").count - 1
        #expect(warnings == 1, "once a take: \(log)")
    }

    /// `mute-out` silences the codec outputs and gives them back.
    @Test func muteOutSilencesTheOutputs() throws {
        let takes = try Scratch()
        defer { takes.remove() }
        let output = takes.path("out.wav")
        let board = try SimulatedBoard(config: "[[connect]]\nfrom = \"tone\"\nto = \"codec.out:1\"\n",
                                       arguments: ["--output", output])
        usleep(500_000)
        // The silence lasts from somewhere within the first console call to somewhere within the
        // second: launching `stagebox console` takes as long as the machine makes it.
        let muteAsked = DispatchTime.now().uptimeNanoseconds
        #expect(console(board, "trigger mute-out") == "mute-out: selected")
        let muteAnswered = DispatchTime.now().uptimeNanoseconds
        usleep(1_000_000)
        let unmuteAsked = DispatchTime.now().uptimeNanoseconds
        #expect(console(board, "trigger mute-out") == "mute-out: normal")
        let unmuteAnswered = DispatchTime.now().uptimeNanoseconds
        usleep(500_000)
        _ = board.stop()
        let samples = try AudioFileReader(path: output).readAll()
        // Windows of 10 ms: loud, then silent for about a second, then loud again.
        let windows = stride(from: 0, to: samples.count - 960, by: 960).map { i in samples[i..<i + 960].map(abs).max() ?? 0 }
        let silent = windows.filter { $0 == 0 }.count
        #expect(windows.count > 150 && windows[10] > 0.05 && windows[windows.count - 5] > 0.05) // inside the 20 ms fades of start and stop
        let shortest = Int((unmuteAsked - muteAnswered) / 10_000_000) - 5 // less the 20 ms fades
        let longest = Int((unmuteAnswered - muteAsked) / 10_000_000) + 2
        #expect(silent >= shortest && silent <= longest, "\(silent) silent windows of 10 ms, expected \(shortest)...\(longest)")
        let inside = windows[10..<(windows.count - 5)] // past the fades of start and stop
        let runs = zip(inside, inside.dropFirst()).filter { ($0 == 0) != ($1 == 0) }.count
        #expect(runs == 2, "loud, silent, loud: \(runs) changes")
    }
}
