import Foundation
import Synchronization
import Testing
import StageboxEngine
import StageboxDrivers
import StageboxRealtime
@testable import StageboxConsole
import StageboxTriggers
import StageboxSystem

/// A simulated board running for real, seen through the console's context.
final class RunningBoard: ConsoleContext, @unchecked Sendable {
    let version = "test"
    let startedAt = monotonicNanoseconds()
    let lifecycleState = "running"
    let driver = "simulated"
    let sampleRate = 48000
    let format = "S32_LE"
    let period = 64
    let periods = 2
    let engine: Engine
    let control = DriverControl()
    let triggers = TriggerBoard()
    let watchdog: String? = nil
    private let recorded = Mutex<[XrunRecord]>([])
    private let thread: RealtimeThread
    /// What `midi` and `status` show; nil: no `[midi]`.
    let midiLines = Mutex<[String]?>(nil)
    var midi: [String]? { midiLines.withLock { $0 } }
    var midiStatus: String? { midiLines.withLock { $0?.last } }

    var statistics: AudioStatistics { control.statistics }
    var clients: [ClientSummary] {
        [ClientSummary(name: "call", pid: 42, ports: [.init(name: "call.mic", rate: 16000, underruns: 3, overruns: 0, fill: 960)])]
    }
    var xruns: [XrunRecord] { recorded.withLock { $0 } }
    func log(last count: Int) -> [String] { Array(["one", "two", "three"].suffix(count)) }
    var configuration: [String] { ["configuration from /boot/stagebox.toml", "[audio] rate = 48000"] }
    func clearXruns() { recorded.withLock { $0 = [] } }
    func record(_ x: XrunRecord) { recorded.withLock { $0.append(x) } }

    init() throws {
        engine = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2, toneSignal: .sine))
        try engine.connect(from: "codec.in", to: "codec.out")
        let engine = self.engine
        triggers.add(name: "mute", title: "Mute the codec inputs") {
            let muted = !((try? engine.isMuted("codec.in")) ?? false)
            try? engine.setMuted("codec.in", muted)
            return muted ? .selected : .normal
        }
        let driver = SimulatedDriver(engine: engine, control: control, inputSignal: .sine,
                                     inputFrequency: 440, inputLevelDB: -6)
        thread = RealtimeThread { _ = driver.run() }
        try thread.start()
    }

    func stop() {
        control.requestStop()
        thread.join()
    }
}

@Suite struct ConsoleTests {
    @Test func everyCommandAnswers() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        usleep(100_000)

        let help = console.execute("help")
        #expect(help.split(separator: "\n").count == Console.commands.count)
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(console.execute("help meters") == "meters: peak and RMS of every port channel, dBFS; a key ends it")
        let status = console.execute("status")
        #expect(status.contains("driver      simulated"))
        #expect(status.contains("48000 Hz S32_LE, 64 x 2 frames = 2.67 ms buffer"))
        #expect(status.contains("clients     1"))
        #expect(console.execute("ports").contains("codec.in   sender    2"))
        #expect(console.execute("connections") == "codec.in -> codec.out")
        #expect(console.execute("connect tone codec.out") == "ok")
        #expect(console.execute("connect tone codec.out") == "tone is already connected to codec.out")
        #expect(console.execute("disconnect tone codec.out") == "ok")
        #expect(console.execute("mute nope") == "no such port: nope")
        #expect(console.execute("mute tone") == "ok")
        #expect(console.execute("ports").contains("tone       sender    1   muted"))
        #expect(console.execute("unmute tone") == "ok")
        #expect(console.execute("clients").contains("call    42   call.mic  16000  3      0     960"))
        #expect(console.execute("xruns") == "no xruns")
        board.record(XrunRecord(timeNanos: board.startedAt + 1_500_000_000, kind: "capture xrun", durationNanos: 2_340_000))
        #expect(console.execute("xruns").contains("1.500 s  capture xrun  2.34 ms"))
        #expect(console.execute("log 2") == "two\nthree")
        #expect(console.execute("log") == "one\ntwo\nthree")
        #expect(console.execute("config").hasPrefix("configuration from /boot/stagebox.toml"))
        #expect(console.execute("trigger mute") == "mute: selected")
        #expect(console.run("update") == ("refused: this stagebox cannot update itself", true))
        #expect(console.run("update /boot/x.raucb --force").failed)
        #expect(console.run("update --force /boot/x.raucb") == ("refused: this stagebox cannot update itself", true))
        #expect(console.run("update /boot/x.raucb --later") == ("usage: update [FILE [--force]|--rollback]", true))
        #expect(console.run("update --bogus") == ("usage: update [FILE [--force]|--rollback]", true))
        #expect(try board.engine.isMuted("codec.in"))
        #expect(console.execute("triggers").contains("mute     selected  Mute the codec inputs"))
        #expect(console.execute("reset-stats") == "statistics reset")
        #expect(console.execute("xruns") == "no xruns")
    }

    @Test func midiListsPeersAndCountersOrSaysThereIsNone() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        #expect(console.run("midi") == ("no MIDI configured (see [midi] in the README)", false))
        #expect(!console.execute("status").contains("midi "))
        board.midiLines.withLock { $0 = ["source       Virtual Raw MIDI 1-0 / VirMIDI 1-0 (20:0)", "events       3 received"] }
        #expect(console.execute("midi") == "source       Virtual Raw MIDI 1-0 / VirMIDI 1-0 (20:0)\nevents       3 received")
        #expect(console.execute("status").contains("\nmidi        events       3 received"))
    }

    @Test func metersShowThePortsInDBFS() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        usleep(100_000)
        let meters = console.execute("meters").split(separator: "\n").map(String.init)
        let input = meters.first { $0.hasPrefix("codec.in:1") } ?? ""
        // A sine at -6 dBFS: peak -6.0; RMS about -9 (over one 64-frame period of 440 Hz).
        #expect(input.contains("-6.0 pk"), "\(input)")
        let rms = input.split(separator: " ").dropLast().last.flatMap { Double($0) } ?? 0
        #expect(rms > -10 && rms < -8, "\(input)")
        #expect(meters.allSatisfy { $0.count <= 80 })
        #expect(meters.contains { $0.hasPrefix("tone:1") && $0.contains(" -inf pk") }, "the tone rests, unheard: \(meters)")
        _ = console.execute("connect tone codec.out")
        usleep(100_000)
        let heard = console.execute("meters").split(separator: "\n").map(String.init)
        #expect(heard.contains { $0.hasPrefix("tone:1") && $0.contains("-20.0 pk") }, "the tone sender at -20 dBFS: \(heard)")
    }

    @Test func connectAndDisconnectTakeChannelsAndConnectionsShowThem() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        #expect(console.execute("connect tone:1 codec.out:2") == "ok")
        #expect(console.execute("connect codec.in:2 codec.out:1") == "ok", "a cross-feed beside the whole-port connection")
        #expect(console.execute("connections") == "codec.in -> codec.out\ntone:1 -> codec.out:2\ncodec.in:2 -> codec.out:1")
        #expect(console.execute("connect codec.in:3 codec.out") == "codec.in has 2 channels (1 to 2): there is no channel 3")
        #expect(console.run("connect codec.in:1 codec.out:1").failed)
        #expect(console.execute("connect codec.in:1 codec.out:1")
                == "codec.in:1 -> codec.out:1 would mix a channel in twice: codec.in -> codec.out already carries it")
        #expect(console.execute("disconnect codec.in codec.out") == "ok")
        #expect(console.execute("connections") == "tone:1 -> codec.out:2\ncodec.in:2 -> codec.out:1",
                "disconnecting whole ports leaves their channel connections")
        #expect(console.execute("disconnect tone:1 codec.out:2") == "ok")
        #expect(console.execute("connections") == "codec.in:2 -> codec.out:1")
    }

    @Test func badCommandsGetOneLineThatSaysWhatWouldBeRight() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        #expect(console.execute("stauts") == "unknown command 'stauts'; did you mean status, storage, state?")
        #expect(console.execute("xyzzy") == "unknown command 'xyzzy'; type help")
        #expect(console.execute("connect tone") == "usage: connect FROM TO")
        #expect(console.execute("log many") == "log: N must be a positive number, not 'many'")
        #expect(console.execute("trigger nope").hasPrefix("no trigger named nope; triggers: mute"))
        #expect(console.execute("") == "")
    }

    /// A disabled trigger is not fired: the console says so, and the command counts as failed.
    @Test func firingADisabledTriggerSaysSo() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        board.triggers.setState("mute", .disabled)
        let answer = console.run("trigger mute")
        #expect(answer.text == "trigger mute is disabled" && answer.failed)
        #expect(try board.engine.isMuted("codec.in") == false, "its action did not run")
        #expect(console.execute("triggers").contains("mute     disabled  Mute the codec inputs"))
        #expect(console.run("help trigger").failed == false)
        board.triggers.setState("mute", .normal)
        #expect(console.run("trigger mute") == (text: "mute: selected", failed: false))
    }

    /// A client's trigger, as the bus server adds it: firing keeps its state, and its removal is heard.
    @Test func aTriggerThatKeepsItsStateAndLeaves() throws {
        let triggers = TriggerBoard()
        let fired = Mutex<Int>(0), changes = Mutex<[String]>([]), removed = Mutex<[String]>([])
        triggers.onChange { name, state in changes.withLock { $0.append("\(name) \(state.name)") } }
        triggers.onRemove { name in removed.withLock { $0.append(name) } }
        #expect(triggers.addKeepingState(name: "call.mic-mute", title: "Mic", state: .alternate) { fired.withLock { $0 += 1 } })
        #expect(!triggers.addKeepingState(name: "call.mic-mute", title: "Again") {}, "a name is taken once")
        #expect(triggers.fireReporting("call.mic-mute") == .fired(.alternate))
        #expect(fired.withLock { $0 } == 1 && changes.withLock { $0 }.isEmpty, "firing changed nothing")
        triggers.setState("call.mic-mute", .selected)
        #expect(changes.withLock { $0 } == ["call.mic-mute selected"])
        #expect(triggers.remove("call.mic-mute"))
        #expect(!triggers.remove("call.mic-mute"))
        #expect(removed.withLock { $0 } == ["call.mic-mute"])
        #expect(triggers.fireReporting("call.mic-mute") == .missing && triggers.fire("call.mic-mute") == nil)
    }

    @Test func completesCommandsAndPorts() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let console = Console(context: board)
        #expect(console.completions(for: "con") == ["connections", "connect", "config"])
        #expect(console.completions(for: "connect co") == ["codec.in", "codec.out"])
        #expect(console.completions(for: "trigger m") == ["mute"])
    }
}
