import Foundation
import StageboxAudioFiles
import StageboxClient
import StageboxProtocol
import Synchronization
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The lifecycle on the simulated board: suspend when idle, never while in use, resume for a
/// client port, fades without a click at start, suspend, resume and a clean stop.
@Suite(.serialized) struct LifecycleTests {
    private func status(_ board: SimulatedBoard) -> String {
        (try? board.stagebox(["console", "--execute", "status"]).stdout) ?? ""
    }

    @Test func suspendsWhenIdleAndResumesForAClientPort() throws {
        let board = try SimulatedBoard(config: "[lifecycle]\nsuspend_after = 1\nfade_ms = 20\n")
        var log = ""
        defer { if log.isEmpty { log = board.stop() } }
        #expect(waitFor(30) { status(board).contains("suspended: not in use for") }, "\(status(board))")
        let noise = try board.start(["noise", "--port", "n.out", "--to", "codec.out", "--seconds", "2"])
        #expect(waitFor(30) { status(board).contains("running: 1 client port") }, "\(status(board))")
        noise.waitUntilExit()
        #expect(noise.terminationStatus == 0)
        let changes = try board.stagebox(["console", "--execute", "lifecycle"]).stdout
        for step in ["starting → running", "running → suspending", "suspending → suspended",
                     "suspended → resuming  1 client port", "resuming → running"] {
            #expect(changes.contains(step), "\(step) in \(changes)")
        }
        log = board.stop()
        let resumed = log.split(separator: "\n").first { $0.contains("resumed: the first period") }
        #expect(resumed != nil, "\(log)")
        if let resumed { print("simulated board, \(resumed.split(separator: "]").last ?? "")") }
        #expect(log.contains("lifecycle: running → stopping (stop requested)"))
    }

    /// Every change reaches the clients as an event: a client that only listens (no port, so
    /// not in use) hears the suspend, and hears the resume its own port brings.
    @Test func clientsHearEveryChange() throws {
        let board = try SimulatedBoard(config: "[lifecycle]\nsuspend_after = 1\n")
        defer { _ = board.stop() }
        let client = try BusClient(name: "listener", socketPath: board.socket)
        defer { client.close() }
        let heard = Mutex<[String]>([])
        client.onEvent { event in
            if case let .lifecycleChanged(state, reason) = event { heard.withLock { $0.append("\(state): \(reason)") } }
        }
        #expect(waitFor(30) { heard.withLock { $0.contains { $0.hasPrefix("suspended") } } }, "\(heard.withLock { $0 })")
        let port = try client.addSender(name: "out", title: "test", channels: 1, sampleRate: 48000)
        #expect(waitFor(30) { heard.withLock { $0.contains("running: 1 client port") } }, "\(heard.withLock { $0 })")
        let all = heard.withLock { $0 }
        #expect(all.contains { $0.hasPrefix("suspending: not in use for") })
        #expect(all.contains("resuming: 1 client port"), "\(all)")
        _ = port
    }

    /// A client that sends while the codec resumes loses nothing, and its first frames play
    /// after the fade-in, at their own level.
    @Test func aClientSendingDuringTheResumeLosesNothing() throws {
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString).wav").path
        defer { unlink(wav) }
        let board = try SimulatedBoard(config: "[lifecycle]\nsuspend_after = 1\nfade_ms = 20\n",
                                       arguments: ["--output", wav, "--input-signal", "silence"])
        #expect(waitFor(30) { status(board).contains("suspended") })
        let client = try BusClient(name: "late", socketPath: board.socket)
        let sender = try client.addSender(name: "out", title: "test", channels: 1, sampleRate: 48000)
        try client.connect(from: sender.name, to: "codec.out")
        // 100 ms of 16-bit values (never 0), sent while the codec reopens.
        var x: UInt32 = 11
        let sent: [Float] = (0..<4800).map { _ in
            x = x &* 1_664_525 &+ 1_013_904_223
            return Float(Int16(truncatingIfNeeded: x >> 16) | 1) / 32768
        }
        for i in stride(from: 0, to: sent.count, by: 480) {
            while !sender.waitForSpace(frames: 480, timeoutSeconds: 0.5) {}
            sent.withUnsafeBufferPointer { sender.send($0.baseAddress! + i, frames: 480) }
        }
        _ = sender.drain(timeoutSeconds: 5)
        client.close()
        usleep(200_000)
        _ = board.stop()
        let samples = try AudioFileReader(path: wav).readAll()
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let first = try #require(left.firstIndex { $0 != 0 })
        #expect(left.count >= first + sent.count)
        #expect(firstDifference(Array(left[first...].prefix(sent.count)), sent) == nil,
                "every frame sent, bit for bit from the first, after the fade-in")
    }

    /// A trigger fired (here from the command line) wants the codec: it resumes.
    @Test func aTriggerResumes() throws {
        let board = try SimulatedBoard(config: "[lifecycle]\nsuspend_after = 1\n")
        defer { _ = board.stop() }
        #expect(waitFor(30) { status(board).contains("suspended") })
        let fired = try board.stagebox(["trigger", "mute"])
        #expect(fired.status == 0, "\(fired.stderr)")
        #expect(waitFor(30) { status(board).contains("running") }, "\(status(board))")
        let changes = try board.stagebox(["console", "--execute", "lifecycle"]).stdout
        #expect(changes.contains("suspended → resuming  resume asked for"), "\(changes)")
    }

    @Test func neverSuspendsWhileAClientIsConnected() throws {
        let board = try SimulatedBoard(config: "[lifecycle]\nsuspend_after = 1\n")
        defer { _ = board.stop() }
        let recorder = try board.start(["record", board.scratch.path("r.wav"), "--port", "rec.in",
                                        "--from", "codec.in", "--seconds", "60"])
        defer { recorder.interrupt(); recorder.waitUntilExit() }
        #expect(waitFor(30) { status(board).contains("running: 1 client port") })
        usleep(3_500_000) // 3.5 × suspend_after
        #expect(status(board).contains("running: 1 client port"), "\(status(board))")
        let refused = try board.stagebox(["console", "--execute", "suspend"])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("refused: the bus is in use (1 client port)"), "\(refused.stdout)")
        let changes = try board.stagebox(["console", "--execute", "lifecycle"]).stdout
        #expect(!changes.contains("suspending"), "\(changes)")
    }

    /// The output WAV of a run that starts, suspends, resumes and stops on SIGTERM: every fade
    /// is there, and no sample steps further than the tone itself does.
    @Test func fadesLeaveNoStepInTheOutput() throws {
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("fades-\(UUID().uuidString).wav").path
        defer { unlink(wav) }
        let board = try SimulatedBoard(config: """
            [lifecycle]
            suspend_after = 1
            fade_ms = 20

            [tone]
            signal = "sine"
            frequency = 1000
            level_db = -20

            [[connect]]
            from = "tone"
            to = "codec.out"
            """, arguments: ["--output", wav, "--input-signal", "silence"])
        #expect(waitFor(30) { status(board).contains("suspended") })
        let resumed = try board.stagebox(["console", "--execute", "resume"])
        #expect(resumed.stdout.contains("resuming"))
        #expect(waitFor(30) { status(board).contains("running") })
        usleep(500_000)
        let log = board.stop() // SIGINT: a clean stop, faded
        #expect(log.contains("running → stopping"), "\(log)")
        let samples = try AudioFileReader(path: wav).readAll()
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let amplitude: Float = 0.1 // -20 dBFS
        let toneStep = amplitude * 2 * .pi * 1000 / 48000
        let steps = zip(left, left.dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! <= toneStep * 1.05, "largest step \(steps.max()!) vs the tone's own \(toneStep)")
        #expect(abs(left.first!) < 0.001 && abs(left.last!) < 0.001, "starts and ends in silence")
        // Two runs of sound (start → suspend, resume → stop), each faded in and out: the
        // envelope reaches the tone's level in between, and silence at the seam.
        let blocks = stride(from: 0, to: left.count - 48, by: 48).map { i in left[i..<(i + 48)].map { abs($0) }.max()! }
        let loud = blocks.map { $0 > amplitude * 0.9 }
        let runs = zip(loud, loud.dropFirst()).filter { !$0 && $1 }.count + (loud.first == true ? 1 : 0)
        #expect(runs == 2, "two runs of sound, got \(runs)")
    }
}

/// What systemd hears from `stagebox run` over `NOTIFY_SOCKET`: the state at every change,
/// READY=1 once the codec runs, and STOPPING=1 at a clean stop.
@Suite struct SystemdLifecycleTests {
    @Test func systemdHearsTheLifecycle() throws {
        let s = try Scratch()
        defer { s.remove() }
        let path = s.path("notify")
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let config = try s.write("b.toml", "[audio]\nrt_priority = 0\n[bus]\nsocket = \"\(s.path("bus.sock"))\"\n")
        let p = Process()
        p.executableURL = StageboxProcess.binary
        p.arguments = ["run", "--simulate", "--config", config]
        p.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": path]) { $1 }
        p.standardOutput = Pipe()
        p.standardError = Pipe()
        try p.run()
        var received: [String] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        func drain() {
            while true {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n <= 0 { break }
                received.append(String(decoding: buffer[0..<n], as: UTF8.self))
            }
        }
        // Stopped once it says it is ready: a start on a loaded machine takes seconds.
        #expect(waitFor(30) { drain(); return received.contains("READY=1") || !p.isRunning })
        p.interrupt()
        p.waitUntilExit()
        drain()
        #expect(received == ["STATUS=running: not in use", "READY=1", "STATUS=stopping: stop requested", "STOPPING=1"],
                "\(received)")
    }
}
