import Foundation
import Logging
import StageboxAppliance
import StageboxClient
import StageboxConfig
import StageboxDrivers
import StageboxHealth
import StageboxRecorder
import StageboxSystem
import StageboxTestSupport
import StageboxTriggers
import Synchronization
import Testing

/// An appliance on the simulated board, in this process: made from a configuration file,
/// running on a thread of its own as `stagebox run` runs it on its main thread.
final class RunningAppliance: @unchecked Sendable {
    // @unchecked: `outcome` is written by the running thread before `done` is signalled and
    // read only after waiting for it.
    let appliance: Appliance
    let scratch: Scratch
    private let done = DispatchSemaphore(value: 0)
    private var outcome: DriverError?

    init(_ toml: String, options: ApplianceOptions = ApplianceOptions()) throws {
        scratch = try Scratch()
        let path = scratch.path("stagebox.toml")
        try ("[bus]\nsocket = \"\(scratch.path("bus.sock"))\"\n[recorder]\ndirectory = \"\(scratch.path("takes"))\"\n" + toml).write(toFile: path, atomically: true, encoding: .utf8)
        let loaded = ConfigLoader.resolve(explicit: path)
        #expect(loaded.problems.isEmpty, "\(loaded.problems)")
        var options = options
        options.simulate = true
        var logger = Logger(label: "appliance-test")
        logger.logLevel = .warning
        appliance = try Appliance(loaded, options: options, logger: logger)
        Thread { [self] in
            do throws(DriverError) { try appliance.run() } catch { outcome = error }
            done.signal()
        }.start()
        #expect(waitFor(30) { self.appliance.control.framesProcessed.load(ordering: .relaxed) > 0 }, "audio runs")
    }

    var socket: String { scratch.path("bus.sock") }

    func console(_ line: String) -> String { appliance.console.run(line).text }

    /// Stops it as SIGINT would, and releases everything; the driver's failure, if it failed.
    @discardableResult
    func stop() -> DriverError? {
        appliance.requestStop()
        done.wait()
        appliance.shutdown()
        scratch.remove()
        return outcome
    }
}

/// The appliance assembled and driven in-process: what the configuration says is what runs,
/// the console reaches every part, a stop is clean. (`Tests/stageboxTests` runs the binary.)
@Suite(.serialized) struct ApplianceTests {
    /// `storage` and `status` tell the recording time left; below ten minutes a take's record
    /// trigger alternates (the log line: RecorderBoardTests). The reserve (`min_free_mb`) is set 40 MB under
    /// the free space: 40 MB of the tone as mono PCM_16 (96 kB a second) is under 7 minutes.
    @Test func storageAndStatusTellTheTimeLeftAndATakeWarnsBelowTenMinutes() throws {
        let free = try #require(Medium(path: FileManager.default.temporaryDirectory.path)).freeBytes
        let reserve = Int(free / 1_000_000) - 40
        let running = try RunningAppliance("source = \"tone\"\nencoding = \"PCM_16\"\nmin_free_mb = \(reserve)\n")
        defer { running.stop() }
        #expect(running.console("record start").hasPrefix("recording take "))
        let storage = running.console("storage")
        #expect(storage.contains("MEDIUM") && storage.contains(running.scratch.path("takes")), "\(storage)")
        #expect(storage.contains("PCM_16 at 48000 Hz writes 96.0 kB a second"), "\(storage)")
        #expect(storage.contains(" min"), "a time left in minutes: \(storage)")
        #expect(waitFor(30) { running.console("triggers").contains("record") && state(running, "record") == "alternate" },
                "\(running.console("triggers"))")
        #expect(running.console("status").contains("of recording left"), "\(running.console("status"))")
        #expect(running.console("record stop").hasPrefix("stopped take "))
        #expect(waitFor(30) { state(running, "record") == "normal" })
    }

    /// A take mirrored to a directory: both copies the same bytes, and `status` says so. A
    /// mirror that is not there: the take runs on, its record trigger shows the error.
    @Test func aMirroredTakeIsCopiedAndAMissingMirrorShowsAnError() throws {
        if let stick = TemporaryMount(sizeKB: 16384) {
            defer { stick.remove() }
            let running = try RunningAppliance("source = \"tone\"\nencoding = \"PCM_16\"\nmirror = \"\(stick.path)\"\n")
            #expect(running.console("record start").hasPrefix("recording take "))
            usleep(300_000)
            #expect(running.console("record stop").hasPrefix("stopped take "))
            #expect(waitFor(30) { running.console("status").contains("copied to \(stick.path)") }, "\(running.console("status"))")
            let row = running.console("storage").split(separator: "\n").first { $0.hasPrefix("\(stick.path) (mirror)") }
            #expect(row?.contains(" tmpfs ") == true, "\(running.console("storage"))")
            let takes = running.scratch.path("takes")
            let file = try #require(try FileManager.default.contentsOfDirectory(atPath: takes).first { $0.hasSuffix(".wav") })
            #expect(FileManager.default.contents(atPath: takes + "/" + file) == FileManager.default.contents(atPath: stick.path + "/" + file))
            running.stop()
        } else {
            print("a mirrored take in the appliance: not run (a medium of its own is a tmpfs mount, which needs root)")
        }

        let lost = try RunningAppliance("source = \"tone\"\nmirror = \"/nonexistent-stagebox-stick\"\n")
        defer { lost.stop() }
        #expect(lost.console("record start").hasPrefix("recording take "))
        #expect(waitFor(30) { state(lost, "record") == "error" }, "\(lost.console("triggers"))")
        #expect(lost.console("status").contains("mirror failed for take 2"), "\(lost.console("status"))")
        #expect(lost.console("status").contains("/nonexistent-stagebox-stick: No such file or directory"))
        #expect(lost.console("status").contains("recording 2"), "the take runs on")
        #expect(lost.console("record stop").hasPrefix("stopped take "))
    }

    /// Health read from a recorded Pi 4 tree: `status` and `health` show it, flags flipped
    /// while it runs are told, and an xrun is listed with what the board was like then.
    @Test func healthIsShownToldAndGivenToEveryXrun() throws {
        let tree = try BoardTree.pi4()
        var options = ApplianceOptions()
        options.systemFiles = tree.files
        let running = try RunningAppliance("source = \"tone\"\n[health]\nwarn_temp_c = 75\n", options: options)
        defer { running.stop() }
        let good = "52.6 °C (cpu-thermal), 1500 of 1800 MHz ondemand, power good, not throttled"
        #expect(waitFor(30) { running.console("status").contains("health      \(good)") }, "\(running.console("status"))")
        #expect(running.console("health").hasPrefix("now: \(good)\nno changes since start"))
        #expect(running.console("config").contains("[health] warn_temp_c=75.0"))

        try tree.write("sys/devices/platform/soc/soc:firmware/get_throttled", "0x50005")
        try tree.write("sys/class/thermal/thermal_zone0/temp", "76012")
        #expect(waitFor(30) { running.console("health").contains("throttling started (throttled)") }, "\(running.console("health"))")
        let health = running.console("health")
        #expect(health.contains("health: UNDER-VOLTAGE"))
        #expect(health.contains("health: the SoC is at 76.0 °C, at or over warn_temp_c 75.0"))
        #expect(running.console("status").contains("76.0 °C (cpu-thermal), 1500 of 1800 MHz ondemand, UNDER-VOLTAGE, THROTTLED"))

        // An xrun as the audio thread reports one: the console lists it with the board's state.
        running.appliance.control.events.push(AudioEvent(kind: .captureXrun, timeNanos: monotonicNanoseconds(), durationNanos: 400_000))
        #expect(waitFor(30) { running.console("xruns").contains("capture xrun") }, "\(running.console("xruns"))")
        #expect(running.console("xruns").contains("0.40 ms\n  at 76.0 °C (cpu-thermal), 1500 of 1800 MHz ondemand, UNDER-VOLTAGE, THROTTLED"),
                "\(running.console("xruns"))")
    }

    /// The slate at the console, as a sound person keeps it between takes.
    @Test func theSlateIsSetAtTheConsoleAndMovesOnWithEachTake() throws {
        let running = try RunningAppliance("source = \"tone\"\nproject = \"Night\"\nscene = \"4\"\n")
        defer { running.stop() }
        #expect(running.console("slate") == "next take: project Night, scene 4, take 1 next, no note")
        #expect(running.console("scene 4A") == "next take: project Night, scene 4A, take 1 next, no note")
        #expect(running.console("take 7") == "next take: project Night, scene 4A, take 7 next, no note")
        #expect(running.console("take next") == "next take: project Night, scene 4A, take 8 next, no note")
        #expect(running.console("take zero") == "refused: take wants a number from 1 to 9999, or next, not 'zero'")
        #expect(running.console("note \"wind on mic 2\"") == "next take: project Night, scene 4A, take 8 next, note: wind on mic 2")
        #expect(running.console("record start").hasPrefix("recording take "))
        #expect(running.console("record start").hasPrefix("refused: already recording take "), "a second start is refused")
        #expect(running.console("slate") == "next take: project Night, scene 4A, take 9 next, no note")
        #expect(running.console("record stop").hasPrefix("stopped take "))
    }

    /// What a slate field may hold: one line of text short enough for the take's chunks and a
    /// console line; `-` clears a field; the take number stops at 9999.
    @Test func slateFieldsAreRefusedWithWhyAndCleared() throws {
        let running = try RunningAppliance("scene = \"4\"\n")
        defer { running.stop() }
        #expect(running.console("scene " + String(repeating: "&", count: 65)) == "refused: scene is 65 bytes long (at most 64)")
        #expect(running.console("note " + String(repeating: "n", count: 241)) == "refused: note is 241 bytes long (at most 240)")
        #expect(running.console("tape x\u{1B}[31m") == "refused: tape holds a control character (U+001B): a slate field is one line of text")
        #expect(running.console("tape x\u{9B}31m") == "refused: tape holds a control character (U+009B): a slate field is one line of text")
        #expect(running.console("scene \"-\"") == "next take: scene -, take 1 next, no note")
        #expect(running.console("scene -") == "next take: no scene, take 1 next, no note")
        #expect(running.console("project Night") == "next take: project Night, no scene, take 1 next, no note")
        #expect(running.console("project \"\"") == "next take: no scene, take 1 next, no note")
        #expect(running.console("take 9999") == "next take: no scene, take 9999 next, no note")
        #expect(running.console("take next") == "refused: take 9999 is the last; set another scene or take number")
        #expect(running.console("record start").hasPrefix("recording take "))
        #expect(running.console("record stop").hasPrefix("stopped take "))
        #expect(running.console("slate") == "next take: no scene, take 9999 next, no note", "a take does not move the slate past 9999")
    }

    private func state(_ running: RunningAppliance, _ trigger: String) -> String {
        running.console("triggers").split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            .first { $0.first == trigger }?.dropFirst().first ?? "?"
    }

    @Test func theConfigurationsConnectionsRunAndTheConsoleChangesThem() throws {
        let running = try RunningAppliance("[[connect]]\nfrom = \"tone\"\nto = \"codec.out\"\n")
        #expect(running.console("connections").contains("tone -> codec.out"))
        #expect(running.console("disconnect tone codec.out") == "ok")
        #expect(!running.console("connections").contains("tone -> codec.out"))
        #expect(running.console("connect codec.in codec.out") == "ok")
        #expect(running.console("connections").contains("codec.in -> codec.out"))
        #expect(running.console("status").contains("simulated board"))
        #expect(running.stop() == nil)
        #expect(running.appliance.control.statistics.snapshot().periods > 0)
    }

    @Test func aClientOnTheSocketSeesTheSameBus() throws {
        let running = try RunningAppliance("")
        defer { running.stop() }
        let client = try BusClient(name: "probe", socketPath: running.socket)
        defer { client.close() }
        let sender = try client.addSender(name: "out", channels: 2, sampleRate: 48000)
        #expect(running.console("ports").contains(sender.name))
        #expect(try client.ports().contains { $0.name == "codec.in" })
        #expect(running.appliance.server?.clients.map(\.name) == ["probe"])
    }

    @Test func theMuteTriggerFiredFromTheConsoleMutesTheInputs() throws {
        let running = try RunningAppliance("")
        defer { running.stop() }
        #expect(running.console("trigger mute").contains("selected"))
        #expect((try? running.appliance.engine.isMuted("codec.in")) == true)
        #expect(running.console("triggers").split(separator: "\n").contains { $0.hasPrefix("mute ") && $0.contains("selected") })
    }

    /// The triggers the appliance registers by itself are exactly the built-in names a
    /// configuration accepts for a button, an LED or a MIDI control: none that a button could
    /// not name (`copy-takes` and `update` once were), none a button could name that never comes.
    @Test func theBuiltinTriggersAreTheOnesTheConfigurationAccepts() throws {
        let running = try RunningAppliance("")
        defer { running.stop() }
        let registered = running.appliance.triggers.all.map(\.name).filter { !$0.contains(".") }
        #expect(Set(registered) == Set(TriggerRules.builtin), "registered \(registered)")
    }

    /// The console's `state save`, `state show` and `state clear` (was a test of the binary).
    @Test func theConsoleShowsSavesAndClearsTheState() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let file = dir.path("state.toml")
        let running = try RunningAppliance("[state]\nfile = \"\(file)\"\nwrite_delay_ms = 60000\n")
        defer { running.stop() }
        func contents() -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
        _ = running.console("connect tone codec.out")
        #expect(running.console("state show").contains("connections = [\"tone -> codec.out\"]"))
        #expect(!contents().contains("tone"), "written before its delay")
        #expect(running.console("state save").contains("state written to \(file)"))
        #expect(contents().contains("connections = [\"tone -> codec.out\"]"))
        #expect(running.console("state clear").contains("cleared"))
        #expect(contents().contains("connections = []"))
        #expect(running.console("connections").contains("tone -> codec.out"), "clear leaves the graph")
    }

    @Test func anOutputFileThatCannotBeMadeIsRefusedByName() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("stagebox.toml")
        try "[bus]\nsocket = \"\(scratch.path("bus.sock"))\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        var options = ApplianceOptions()
        options.simulate = true
        options.output = "/nonexistent-folder/out.wav"
        #expect {
            try Appliance(ConfigLoader.resolve(explicit: path), options: options, logger: Logger(label: "test"))
        } throws: { error in
            "\(error)".contains("/nonexistent-folder/out.wav")
        }
        #expect(access(scratch.path("bus.sock"), F_OK) != 0, "no bus is left behind")
    }

    /// A script that runs `stagebox console --execute` as soon as the socket shows is answered by
    /// the console, not refused: the bus opens last, once everything behind it exists.
    @Test func theFirstConsoleLineOnANewSocketIsAnswered() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("stagebox.toml")
        let socket = scratch.path("bus.sock")
        try "[bus]\nsocket = \"\(socket)\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let made = Mutex<Appliance?>(nil)
        let built = DispatchSemaphore(value: 0)
        Thread {
            var options = ApplianceOptions()
            options.simulate = true
            let appliance = try? Appliance(ConfigLoader.resolve(explicit: path), options: options,
                                           logger: Logger(label: "test"))
            made.withLock { $0 = appliance }
            built.signal()
        }.start()
        var answer = "the socket never showed"
        // Looked for every 100 µs, to ask at once; for up to 30 s, as a start on a loaded machine is slow.
        let end = Date().addingTimeInterval(30)
        while access(socket, F_OK) != 0 && Date() < end { usleep(100) }
        if access(socket, F_OK) == 0 {
            let client = try BusClient(name: "script", socketPath: socket)
            answer = (try? client.console("status")) ?? "refused"
            client.close()
        }
        built.wait()
        made.withLock { $0?.shutdown() }
        #expect(answer.contains("simulated board"), "\(answer)")
    }
}
