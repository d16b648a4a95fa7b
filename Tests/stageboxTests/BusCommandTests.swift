import Foundation
import StageboxAudioFiles
import StageboxClient
import StageboxProtocol
import StageboxTestSupport
import Testing

@Suite(.serialized) struct BusCommandTests {
    @Test func playIntoRecordIsBitExact() throws {
        let board = try SimulatedBoard()
        var log = ""
        defer { log = board.stop(); _ = log }
        let s = board.scratch
        var x: UInt32 = 5
        let input: [Float] = (0..<(2 * 24000)).map { _ in
            x = x &* 1_664_525 &+ 1_013_904_223
            return Float(Int16(truncatingIfNeeded: x >> 16)) / 32768
        }
        let w = try AudioFileWriter(path: s.path("in.wav"), sampleRate: 48000, channels: 2, encoding: .pcm16)
        try w.write(input)
        try w.close()
        let recorder = Process()
        recorder.executableURL = StageboxProcess.binary
        // 0.5 s of input into a 5 s recording: room for a late start of `play` on a busy machine
        // (with 1.5 s the end of the input was cut off once).
        recorder.arguments = ["record", s.path("out.wav"), "--port", "rec.in", "--seconds", "5", "--encoding", "PCM_16",
                              "--socket", board.socket]
        recorder.standardOutput = Pipe()
        try recorder.run()
        #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains("rec.in")) == true })
        let play = try board.stagebox(["play", s.path("in.wav"), "--port", "player.out", "--to", "rec.in"])
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stdout.contains("played 24000 frames"))
        recorder.waitUntilExit()
        #expect(recorder.terminationStatus == 0)
        let out = try AudioFileReader(path: s.path("out.wav")).readAll()
        let start = (0..<(out.count / 2)).first { out[$0 * 2] != 0 || out[$0 * 2 + 1] != 0 } ?? 0
        #expect(firstDifference(Array(out[(start * 2)...].prefix(input.count)), input) == nil)
    }

    /// `record --from X` waits for X to appear, as its help says, and gives up after --wait.
    @Test func recordFromWaitsForItsSource() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let s = board.scratch
        let recorder = try board.start(["record", s.path("late.wav"), "--port", "rec.in", "--from", "late.out",
                                        "--wait", "10", "--seconds", "0.5", "--channels", "1"])
        usleep(700_000)
        #expect(recorder.isRunning, "record waits for late.out")
        let noise = try board.start(["noise", "--port", "late.out", "--seconds", "3"])
        recorder.waitUntilExit()
        let (out, err) = output(of: recorder)
        #expect(recorder.terminationStatus == 0, "\(err)")
        #expect(err.contains("waiting up to 10.0 s for late.out to appear on the bus"), "\(err)")
        #expect(out.contains("recorded 24000 frames"), "\(out)")
        // The wait is not recorded: no ring filled with silence meanwhile (its 341 ms were the
        // take's start, and hundreds of overruns), just the moments the connection takes.
        #expect(out.contains("overruns 0)"), "\(out)")
        let samples = try AudioFileReader(path: s.path("late.wav")).readAll()
        let firstSound = samples.firstIndex { $0 != 0 }
        #expect(firstSound != nil, "the noise was recorded")
        #expect((firstSound ?? 0) < 9600, "the take starts within 200 ms of its source, not \(firstSound ?? 0) frames later")
        noise.interrupt()
        noise.waitUntilExit()

        let missing = try board.stagebox(["record", s.path("none.wav"), "--port", "rec2.in", "--from", "nobody.out",
                                          "--wait", "0.5", "--seconds", "1"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("stagebox record: nobody.out did not appear on the bus within 0.5 s; the ports are: codec.in"),
                "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.path("none.wav")), "a record that never started leaves no file")

        // play --to waits for its receiver the same way.
        let w = try AudioFileWriter(path: s.path("beep.wav"), sampleRate: 48000, channels: 1, encoding: .pcm16)
        try w.write([Float](repeating: 0.25, count: 4800))
        try w.close()
        let player = try board.start(["play", s.path("beep.wav"), "--port", "p.out", "--to", "later.in", "--wait", "10"])
        usleep(700_000)
        #expect(player.isRunning, "play waits for later.in")
        let late = try board.start(["record", s.path("later.wav"), "--port", "later.in", "--seconds", "1", "--channels", "1"])
        player.waitUntilExit()
        late.waitUntilExit()
        #expect(player.terminationStatus == 0, "\(output(of: player).stderr)")
        #expect(try AudioFileReader(path: s.path("later.wav")).readAll().contains(0.25), "the file reached the late receiver")
    }

    /// A bad option value is refused with the subcommand's usage, not the top-level one.
    @Test(arguments: [
        (["record", "f.wav", "--port", "ab"], "stagebox record"),
        (["record", "f.wav", "--port", "a.b", "--encoding", "PCM_8"], "stagebox record"),
        (["record", "f.wav", "--port", "a.b", "--channels", "x"], "stagebox record"),
        (["play", "f.wav", "--port", "ab"], "stagebox play"),
        (["noise", "--port", "ab"], "stagebox noise"),
        (["noise", "--port", "a.b", "--level-db", "3"], "stagebox noise"),
        (["run", "--simulate", "--speed", "100"], "stagebox run"),
        (["render", "--input", "a.wav"], "stagebox render"),
        (["diag", "gpio-set", "gpiochip0", "1", "5"], "stagebox diag gpio-set"),
        (["diag", "watchdog", "--then", "explode"], "stagebox diag watchdog"),
    ])
    func badOptionValuesShowTheSubcommandsUsage(arguments: [String], usage: String) throws {
        let r = try StageboxProcess.run(arguments)
        #expect(r.status == 64, "\(arguments): \(r.status)")
        #expect(r.stderr.contains("Usage: \(usage) "), "\(arguments): \(r.stderr)")
    }

    /// `stagebox console --execute`: a line longer than the wire holds is not sent cut short;
    /// it is refused with its length, and the others still run.
    @Test func aConsoleLineTooLongIsRefusedNotCut() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let long = "note " + String(repeating: "é", count: 600)
        let r = try board.stagebox(["console", "--execute", "\(long);slate"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("a console line holds at most 1024 bytes; 'note éé"), "\(r.stderr)")
        #expect(r.stdout.contains("next take: no scene, take 1 next, no note"), "the next line ran: \(r.stdout)")
    }

    @Test func commandLineClientsReportErrorsClearly() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let nope = try board.stagebox(["connect", "nope", "codec.out"])
        #expect(nope.status == 1 && nope.stderr.contains("no such port: nope"))
        let twice = try board.stagebox(["connect", "codec.in", "codec.out"])
        #expect(twice.status == 1 && twice.stderr.contains("already connected"), "\(twice.stderr)")
        #expect(try board.stagebox(["mute", "tone"]).status == 0)
        #expect(try board.stagebox(["ports"]).stdout.contains("tone          sender    1   stagebox  muted"))
        #expect(try board.stagebox(["unmute", "tone"]).status == 0)
        #expect(try board.stagebox(["trigger", "mute"]).status == 0)
        let unknown = try board.stagebox(["trigger", "fireworks"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no trigger named fireworks"))
        let badPort = try board.stagebox(["noise", "--port", "noport"])
        #expect(badPort.status != 0 && badPort.stderr.contains("CLIENT.PORT"))
        let none = try StageboxProcess.run(["ports", "--socket", board.scratch.path("nobody.sock")])
        #expect(none.status == 1 && none.stderr.contains("no stagebox is running at"))
    }

    @Test func connectTakesChannelsAndPortsListsThem() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let made = try board.stagebox(["connect", "codec.in:1", "codec.out:2"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try board.stagebox(["ports"]).stdout.contains("connections:\n  codec.in -> codec.out\n  codec.in:1 -> codec.out:2\n"))
        let wide = try board.stagebox(["connect", "codec.in:3", "codec.out"])
        #expect(wide.status == 1 && wide.stderr.contains("codec.in has 2 channels (1 to 2): there is no channel 3"), "\(wide.stderr)")
        #expect(try board.stagebox(["disconnect", "codec.in:1", "codec.out:2"]).status == 0)
        #expect(try board.stagebox(["ports"]).stdout.hasSuffix("connections:\n  codec.in -> codec.out\n"))
    }

    @Test func aClientKilledMidStreamIsCleanedUp() throws {
        let board = try SimulatedBoard()
        var log = ""
        defer { _ = log }
        #expect(eventually { (try? board.stagebox(["ports"]).status) == 0 })
        let before = board.openDescriptors
        for round in 0..<3 {
            let noise = Process()
            noise.executableURL = StageboxProcess.binary
            noise.arguments = ["noise", "--port", "victim\(round).out", "--to", "codec.out", "--socket", board.socket]
            noise.standardOutput = Pipe()
            noise.standardError = Pipe()
            try noise.run()
            #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains("victim\(round).out")) == true })
            usleep(200_000) // mid-stream
            kill(noise.processIdentifier, SIGKILL)
            noise.waitUntilExit()
            #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains("victim")) == false },
                    "the killed client's port is gone")
        }
        let ports = try board.stagebox(["ports"])
        #expect(!ports.stdout.contains("victim") && ports.stdout.contains("codec.in -> codec.out"))
        #expect(eventually(30) { board.openDescriptors <= before }, "descriptors \(before) → \(board.openDescriptors)")
        log = board.stop()
        #expect(log.contains("left: disconnected"))
    }
}

extension BusCommandTests {
    /// A sender that runs dry is heard as a dropout; when its client leaves, the leave line
    /// says how often, so the dropout stays in the log after the client's counters are gone.
    @Test func aLeavingClientsLineNamesItsUnderruns() throws {
        let board = try SimulatedBoard()
        var log = ""
        defer { if board.isRunning { log = board.stop() } }
        #expect(eventually { (try? board.stagebox(["ports"]).status) == 0 })
        let client = try BusClient(name: "dry", socketPath: board.socket)
        let sender = try client.addSender(name: "out", channels: 2)
        let quiet = try BusClient(name: "steady", socketPath: board.socket)
        _ = try quiet.addSender(name: "out", channels: 2)
        #expect(runDry(sender), "the bus took what was sent and ran dry")
        client.close()
        quiet.close()
        #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains("steady.out")) == false })
        log = board.stop()
        #expect(log.contains("left: disconnected; dry.out 1 underrun, 0 overruns"), "\(log)")
        // A port that never ran short adds nothing to its line.
        #expect(log.contains("steady") && !log.contains("steady.out 0"), "\(log)")
    }

    /// A client that removes its port before it leaves (as the ALSA plugin does at every close)
    /// has the port's dropouts logged when the port goes: its leave line no longer has the port.
    @Test func aRemovedPortsLineNamesItsUnderruns() throws {
        let board = try SimulatedBoard()
        var log = ""
        defer { if board.isRunning { log = board.stop() } }
        #expect(eventually { (try? board.stagebox(["ports"]).status) == 0 })
        let client = try BusClient(name: "dry", socketPath: board.socket)
        var sender: SenderPort? = try client.addSender(name: "out", channels: 2)
        var steady: SenderPort? = try client.addSender(name: "steady", channels: 2)
        #expect(sender.map(runDry) == true, "the bus took what was sent and ran dry")
        sender = nil
        steady = nil
        _ = steady
        #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains("dry.")) == false })
        client.close()
        log = board.stop()
        #expect(log.contains("removed dry.out; dry.out 1 underrun, 0 overruns"), "\(log)")
        #expect(!log.contains("removed dry.steady") && log.contains("dry (pid"), "\(log)")
        #expect(!log.contains("left: disconnected;"), "the leave line has no ports left to name: \(log)")
    }

    /// Two blocks prime the port (its start cushion); the bus takes them, then finds it empty.
    private func runDry(_ sender: SenderPort) -> Bool {
        let block = [Float](repeating: 0.25, count: 2 * 256)
        for _ in 0..<2 { block.withUnsafeBufferPointer { sender.send($0.baseAddress!, frames: 256) } }
        return eventually(10) { sender.underruns > 0 }
    }
}

extension BusCommandTests {
    /// A client that asks and never reads the answers is let go once its socket is full, and
    /// its leave line says why; one that goes away while the bus answers it is "disconnected"
    /// there. The bus carries on for everyone else.
    @Test func aClientThatStopsReadingIsLetGoAndItsLineSaysWhy() throws {
        let board = try SimulatedBoard()
        var log = ""
        defer { if board.isRunning { log = board.stop() } }
        #expect(eventually { (try? board.stagebox(["ports"]).status) == 0 })
        let deaf = try RawSocket(path: board.socket)
        deaf.send(ClientMessage.hello(clientName: "deaf", version: busProtocolVersion).encoded(requestID: 1))
        guard case .welcome? = deaf.receive() else { Issue.record("no welcome"); return }
        // Each answer is a list of the ports: thousands of them are more than a socket holds.
        let ask = ClientMessage.listPorts.encoded(requestID: 2)
        for _ in 0..<5000 { deaf.send(ask) }
        #expect(try board.stagebox(["console", "--execute", "clients"]).stdout.contains("CLIENT"), "the console lists clients")
        #expect(eventually { (try? board.stagebox(["console", "--execute", "clients"]).stdout.contains("deaf")) == false },
                "deaf is let go")
        // One that asks and is gone before the answers: the bus finds it gone, not deaf. The
        // board is stopped meanwhile, so the asks are read and answered only after the close.
        do {
            let gone = try RawSocket(path: board.socket)
            gone.send(ClientMessage.hello(clientName: "gone", version: busProtocolVersion).encoded(requestID: 1))
            guard case .welcome? = gone.receive() else { Issue.record("no welcome"); return }
            kill(board.process.processIdentifier, SIGSTOP)
            for _ in 0..<100 { gone.send(ask) }
            shutdown(gone.fd, Int32(SHUT_RDWR)) // gone, before the board runs again
            kill(board.process.processIdentifier, SIGCONT)
        }
        #expect(try board.stagebox(["ports"]).stdout.contains("codec.in"), "the bus carries on")
        log = withExtendedLifetime(deaf) { board.stop() } // deaf's socket stays open, unread, to the end
        #expect(log.contains("deaf (pid \(getpid()), uid \(getuid()), gid \(getgid())) left: not reading its socket"), "\(log)")
        #expect(log.contains("gone (pid \(getpid()), uid \(getuid()), gid \(getgid())) left: disconnected"), "\(log)")
    }
}

func eventually(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

extension BusCommandTests {
    @Test func theConsoleAnswersOverTheBusSocket() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let r = try board.stagebox(["console", "--execute", "status;ports;connect tone codec.out;connections;nonsense"])
        #expect(r.status == 1, "one command failed: \(r.stderr)")
        #expect(r.stdout.contains("driver      simulated"))
        #expect(r.stdout.contains("codec.out  receiver  2"))
        #expect(r.stdout.contains("ok\ncodec.in -> codec.out\ntone -> codec.out"))
        #expect(r.stdout.contains("unknown command 'nonsense'"))
        // Every command answers; the status says whether any failed, as scripts need.
        #expect(try board.stagebox(["console", "--execute", "status;mute tone;unmute tone"]).status == 0)
        for failing in ["connect tone codec.out", "mute nope", "trigger fireworks", "help nothing", "log -3", "connect tone"] {
            let f = try board.stagebox(["console", "--execute", failing])
            #expect(f.status == 1, "\(failing): \(f.stdout)")
        }
    }
}

extension BusCommandTests {
    /// Option values as people type them: a negative level works, a negative or zero duration is
    /// refused with the subcommand's own words.
    @Test func optionValuesAsPeopleTypeThem() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let noise = try board.stagebox(["noise", "--port", "n.out", "--level-db", "-6", "--seconds", "0.2"])
        #expect(noise.status == 0, "\(noise.stderr)")
        #expect(noise.stdout.contains("sent 9600 frames of noise"), "\(noise.stdout)")
        for command in [["record", board.scratch.path("x.wav"), "--port", "r.in"], ["noise", "--port", "n.out"]] {
            let r = try board.stagebox(command + ["--seconds", "-1"])
            #expect(r.status != 0 && r.stderr.contains("--seconds must be more than 0, not -1.0"), "\(command[0]): \(r.stderr)")
        }
        let loud = try board.stagebox(["noise", "--port", "n.out", "--level-db", "3"])
        #expect(loud.status != 0 && loud.stderr.contains("--level-db must be 0 or less"), "\(loud.stderr)")
    }
}

extension BusCommandTests {
    /// A board that dies mid-take (here: SIGKILL) ends `stagebox record` within a second or so:
    /// it says the bus went away, exits 1, and its file keeps what came before, whole.
    @Test func aRecordWhoseBusDiesEndsAndKeepsItsTake() throws {
        let board = try SimulatedBoard()
        defer { if board.isRunning { _ = board.stop() } }
        let keep = try Scratch()
        defer { keep.remove() }
        let take = keep.path("cut.wav")
        let recorder = try board.start(["record", take, "--port", "rec.in", "--from", "codec.in"])
        #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains("rec.in")) == true })
        usleep(1_000_000)
        let said = killBoard(board, thenWaitFor: recorder, "record")
        #expect(said.stderr.contains("stagebox record: the bus went away") && said.stderr.contains("cut.wav keeps the"),
                "\(said.stderr)")
        let frames = try AudioFileReader(path: take).readAll().count / 2
        #expect(frames > 24000, "the take before the board died: \(frames) frames")
    }
}

extension BusCommandTests {
    /// `play` waiting for room and `noise` sending on their own clock end too when the board
    /// dies, saying so, instead of waiting or sending into nothing for ever.
    @Test(arguments: ["play", "noise"]) func aClientWhoseBusDiesEnds(command: String) throws {
        let board = try SimulatedBoard()
        defer { if board.isRunning { _ = board.stop() } }
        let keep = try Scratch()
        defer { keep.remove() }
        var arguments = ["noise", "--port", "n.out", "--to", "codec.out"]
        if command == "play" {
            let file = keep.path("long.wav") // a minute: still playing when the board dies
            let writer = try AudioFileWriter(path: file, sampleRate: 48000, channels: 1, encoding: .pcm16)
            try writer.write([Float](repeating: 0.1, count: 48000 * 60))
            try writer.close()
            arguments = ["play", file, "--port", "p.out", "--to", "codec.out"]
        }
        let client = try board.start(arguments)
        #expect(eventually { (try? board.stagebox(["ports"]).stdout.contains(command == "play" ? "p.out" : "n.out")) == true })
        usleep(500_000)
        let said = killBoard(board, thenWaitFor: client, command)
        #expect(said.stderr.contains("stagebox \(command): the bus went away"), "\(said.stderr)")
    }
}

/// Kills the board (SIGKILL: no goodbye to its clients) and expects `client` to end on its own
/// within 5 s with exit status 1; returns what it printed.
private func killBoard(_ board: SimulatedBoard, thenWaitFor client: Process, _ command: String) -> (stdout: String, stderr: String) {
    kill(board.process.processIdentifier, SIGKILL)
    board.process.waitUntilExit()
    #expect(eventually(5) { !client.isRunning }, "\(command) still runs on a bus that is gone")
    if client.isRunning { client.terminate() }
    client.waitUntilExit()
    #expect(client.terminationStatus == 1)
    return output(of: client)
}
