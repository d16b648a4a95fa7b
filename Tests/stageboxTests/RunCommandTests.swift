import StageboxTestSupport
import Foundation
import Testing

@Suite struct RunCommandTests {
    @Test func simulateProcessesTheFramesAskedForInAboutRealTime() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("sim.toml", "[audio]\nperiod = 128\nrt_priority = 0\n")
        let r = try StageboxProcess.run(["run", "--simulate", "--config", config, "--frames", "48000"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("frames=48000 periods=375 "), "\(r.stdout)")
        // One second of audio at 48 kHz: paced by the clock, not run free.
        #expect(r.seconds >= 0.95 && r.seconds < 60, "took \(r.seconds) s") // the upper bound: not run until killed
    }

    /// An option that means nothing in the mode asked for is refused with why, not ignored.
    @Test(arguments: [
        (["--simulate", "--free-run"], "--free-run is for a device; the simulated board is paced by its clock"),
        (["--input-signal", "noise"], "--input-signal goes with --simulate"),
        (["--simulate", "--input-signal", "pink"], "--input-signal must be sine, noise or silence, not 'pink'"),
        (["--output", "x.wav"], "--output goes with --simulate"),
        (["--loop", "64"], "--loop goes with --simulate"),
        (["--simulate", "--loop", "64", "--input-signal", "noise"], "--input-signal and --loop both say what the inputs hear"),
    ])
    func optionsForTheOtherModeAreRefusedWithWhy(arguments: [String], why: String) throws {
        let r = try StageboxProcess.run(["run"] + arguments)
        #expect(r.status == 64, "\(arguments): \(r.status)")
        #expect(r.stderr.contains(why), "\(arguments): \(r.stderr)")
    }

    @Test func simulateWritesWhatThePlaybackPlays() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("sim.toml", "[audio]\nrt_priority = 0\n\n[[connect]]\nfrom = \"tone\"\nto = \"codec.out\"\n")
        let wav = s.path("out.wav")
        let r = try StageboxProcess.run(["run", "--simulate", "--config", config, "--frames", "9600", "--output", wav])
        #expect(r.status == 0, "\(r.stderr)")
        let info = try StageboxProcess.run(["render", "--config", config, "--input", wav, "--output", s.path("again.wav")])
        #expect(info.status == 0, "the written file reads back as a WAV: \(info.stderr)")
        #expect(info.stdout.contains("rendered 9600 frames"))
    }

    @Test func aBrokenConfigurationStillRunsOnTheDefaults() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("broken.toml", "[audio]\nrate = 3\nperiod = 7\n")
        let r = try StageboxProcess.run(["run", "--simulate", "--config", config, "--frames", "640"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("\(config):2: audio.rate: 3 is out of range"))
        #expect(r.stderr.contains("\(config):3: audio.period: 7 is out of range"))
        #expect(r.stderr.contains("running on the built-in defaults"))
        #expect(r.stdout.contains("frames=640 periods=10 "))
    }

    /// The product's codec loop on user-space ALSA PCMs named in ~/.asoundrc: capture reads a raw
    /// file, playback writes one; after the pre-fill the output is the input, bit for bit.
    @Test(arguments: [("S16_LE", 2, 64), ("S24_3LE", 3, 128), ("S32_LE", 4, 256)])
    func runCopiesAudioBitExactThroughALSA(format: String, bytes: Int, period: Int) throws {
        let s = try Scratch()
        defer { s.remove() }
        let frames = period * 150 // whole periods: --frames runs whole periods
        var x: UInt32 = 7
        var input = [UInt8]()
        for _ in 0..<(frames * 2 * bytes) {
            x = x &* 1_664_525 &+ 1_013_904_223
            input.append(UInt8(truncatingIfNeeded: x >> 24))
        }
        if bytes == 4 { for i in stride(from: 0, to: input.count, by: 4) { input[i] = 0 } } // S32: 24 significant bits
        try Data(input).write(to: URL(fileURLWithPath: s.path("in.raw")))
        try s.write(".asoundrc", """
            pcm.boxin { type file slave.pcm null file "/dev/null" infile "\(s.path("in.raw"))" format raw }
            pcm.boxout { type file slave.pcm null file "\(s.path("out.raw"))" format raw }
            """)
        let config = try s.write("box.toml", """
            [audio]
            capture = "boxin"
            playback = "boxout"
            format = "\(format)"
            period = \(period)
            periods = 2
            rt_priority = 0

            # Bit for bit from the first frame: no fade-in (the fade is LifecycleTests' and OutputFadeTests').
            [lifecycle]
            fade_ms = 0
            """)
        let r = try StageboxProcess.run(["run", "--config", config, "--frames", "\(frames)"], environment: ["HOME": s.url.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("cannot be linked"), "the fallback to a manual start is reported")
        #expect(r.stdout.contains("frames=\(frames) "))
        let out = [UInt8](try Data(contentsOf: URL(fileURLWithPath: s.path("out.raw"))))
        let prefill = 2 * period * 2 * bytes
        #expect(out.count == prefill + input.count)
        #expect(out.prefix(prefill).allSatisfy { $0 == 0 })
        #expect(firstDifference(Array(out.dropFirst(prefill)), input) == nil)
    }

    /// The statistics line's frames and periods agree, also after the console's reset-stats.
    @Test func theStatisticsLineAgreesWithItself() throws {
        let s = try Scratch()
        defer { s.remove() }
        let socket = s.path("bus.sock")
        let config = try s.write("box.toml", "[audio]\nperiod = 64\nrt_priority = 0\n[bus]\nsocket = \"\(socket)\"\n")
        let process = Process()
        process.executableURL = StageboxProcess.binary
        process.arguments = ["run", "--simulate", "--config", config]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        for _ in 0..<3000 where !FileManager.default.fileExists(atPath: socket) && process.isRunning { usleep(10_000) }
        usleep(300_000)
        let reset = try StageboxProcess.run(["console", "--socket", socket, "--execute", "reset-stats"])
        #expect(reset.status == 0, "\(reset.stderr)")
        usleep(300_000)
        process.interrupt()
        process.waitUntilExit()
        let line = readTextToEnd(out.fileHandleForReading.fileDescriptor)
        func number(_ key: String) -> Int? {
            guard let r = line.range(of: key + "=") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }
        let frames = try #require(number("frames")), periods = try #require(number("periods"))
        #expect(frames > 64 * 20 && frames == periods * 64, "\(line)")
    }

    @Test func aMissingCodecIsRetriedUntilStopped() throws {
        let s = try Scratch()
        defer { s.remove() }
        let socket = s.path("bus.sock")
        let config = try s.write("box.toml", "[audio]\ncapture = \"nosuchdevice\"\nplayback = \"nosuchdevice\"\nrt_priority = 0\n"
                                 + "[bus]\nsocket = \"\(socket)\"\n")
        let process = Process()
        process.executableURL = StageboxProcess.binary
        process.arguments = ["run", "--config", config]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        // The console tells the truth: not running, but waiting, and for how long (asked until
        // the socket is there: a start on a loaded machine takes seconds).
        var status = ""
        #expect(waitFor(30) {
            status = (try? StageboxProcess.run(["console", "--socket", socket, "--execute", "status"]).stdout) ?? ""
            return status.contains("waiting for the codec (retry in ") || !process.isRunning
        }, "\(status)")
        #expect(!status.contains("running"), "\(status)")
        Thread.sleep(forTimeInterval: 1.0) // the retries at 100 and 200 ms, then more
        process.interrupt()
        process.waitUntilExit()
        let log = readTextToEnd(err.fileHandleForReading.fileDescriptor)
        #expect(process.terminationStatus == 0, "SIGINT stops it cleanly")
        #expect(log.contains("cannot open capture device 'nosuchdevice'"))
        #expect(log.contains("trying again in 100 ms") && log.contains("trying again in 200 ms"), "\(log)")
    }

    @Test func devicesListsWhatAlsaKnows() throws {
        let r = try StageboxProcess.run(["devices"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("null"), "\(r.stdout)")
    }
}
