import Foundation
import StageboxTestSupport
import StageboxClient
import StageboxProtocol
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a running child process has printed so far, read as it comes (a line that shows up
/// while the process runs was flushed).
final class LiveOutput: Sendable {
    private let text = Mutex<String>("")

    init(_ pipe: Pipe) {
        let fd = pipe.fileHandleForReading.fileDescriptor
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                let chunk = String(decoding: buffer[0..<n], as: UTF8.self)
                text.withLock { $0 += chunk }
            }
        }
    }

    var value: String { text.withLock { $0 } }
}

/// The events a client saw (for `stagebox trigger` tests).
final class TriggerEvents: Sendable {
    private let list = Mutex<[BusEvent]>([])
    func record(_ event: BusEvent) { list.withLock { $0.append(event) } }
    func contains(_ event: BusEvent) -> Bool { list.withLock { $0.contains(event) } }
}

/// Every claim of `stagebox trigger --help`.
@Suite(.serialized) struct TriggerCommandTests {
    /// A board whose bus answers: its socket file appears when bound, a moment before it listens.
    private func answeringBoard() throws -> SimulatedBoard {
        let board = try SimulatedBoard()
        #expect(eventually { (try? board.stagebox(["ports"]).status) == 0 }, "the board's bus answers")
        return board
    }

    /// Starts `stagebox trigger --create NAME …` and waits until the trigger is on the bus.
    private func creator(_ board: SimulatedBoard, _ arguments: [String], name: String) throws -> (Process, LiveOutput, LiveOutput) {
        let p = Process()
        p.executableURL = StageboxProcess.binary
        p.arguments = ["trigger", "--create"] + arguments + ["--socket", board.socket]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let stdout = LiveOutput(out), stderr = LiveOutput(err)
        #expect(eventually { stderr.value.contains("made trigger \(name)") }, "\(stderr.value)")
        return (p, stdout, stderr)
    }

    @Test func createPrintsEachFireAtOnceTogglesItsStateAndLeavesOnSIGTERM() throws {
        let board = try answeringBoard()
        defer { _ = board.stop() }
        let watcher = try BusClient(name: "watch", socketPath: board.socket)
        defer { watcher.close() }
        let seen = TriggerEvents()
        watcher.onEvent { seen.record($0) }
        let (p, out, _) = try creator(board, ["call.mic-mute", "--title", "Mute the microphone"], name: "call.mic-mute")
        let listed = try board.stagebox(["console", "--execute", "triggers"]).stdout
        #expect(listed.contains("call.mic-mute") && listed.contains("normal") && listed.contains("Mute the microphone"), "\(listed)")

        // Fired by `stagebox trigger`, by another client, and from the console.
        #expect(try board.stagebox(["trigger", "call.mic-mute"]).status == 0)
        #expect(eventually { out.value == "fired call.mic-mute\n" }, "printed and flushed while running: '\(out.value)'")
        #expect(eventually { seen.contains(.triggerChanged(name: "call.mic-mute", state: 1)) }, "normal → selected")
        try watcher.fireTrigger("call.mic-mute")
        #expect(eventually { out.value == "fired call.mic-mute\nfired call.mic-mute\n" }, "'\(out.value)'")
        #expect(eventually { seen.contains(.triggerChanged(name: "call.mic-mute", state: 0)) }, "selected → normal")
        #expect(try board.stagebox(["console", "--execute", "trigger call.mic-mute"]).status == 0)
        #expect(eventually { out.value.split(separator: "\n").count == 3 }, "'\(out.value)'")

        p.terminate()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(eventually { seen.contains(.triggerRemoved("call.mic-mute")) })
        #expect(!(try board.stagebox(["console", "--execute", "triggers"]).stdout.contains("call.mic-mute")))
    }

    @Test func createLeavesOnSIGINTAndWhenKilled() throws {
        let board = try answeringBoard()
        defer { _ = board.stop() }
        let (interrupted, _, _) = try creator(board, ["one.t"], name: "one.t")
        interrupted.interrupt()
        interrupted.waitUntilExit()
        #expect(interrupted.terminationStatus == 0)
        let (killed, _, _) = try creator(board, ["two.t"], name: "two.t")
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        #expect(eventually {
            let listed = (try? board.stagebox(["console", "--execute", "triggers"]).stdout) ?? "one.t"
            return !listed.contains("one.t") && !listed.contains("two.t")
        }, "both triggers left with their clients")
        let gone = try board.stagebox(["trigger", "two.t"])
        #expect(gone.status == 1 && gone.stderr.contains("no trigger named two.t"), "\(gone.stderr)")
    }

    @Test func createEndsWithStatusOneWhenStageboxGoesAway() throws {
        let board = try answeringBoard()
        let (p, _, err) = try creator(board, ["call.hand"], name: "call.hand")
        _ = board.stop()
        #expect(eventually { !p.isRunning })
        p.waitUntilExit()
        #expect(p.terminationStatus == 1)
        #expect(err.value.contains("trigger call.hand is gone with it"), "\(err.value)")
    }

    @Test func firingADisabledTriggerPrintsSoAndExitsOne() throws {
        let board = try answeringBoard()
        defer { _ = board.stop() }
        let owner = try BusClient(name: "call", socketPath: board.socket)
        defer { owner.close() }
        let hand = try owner.createTrigger(name: "hand", title: "Raise a hand") { _ in }
        try hand.setState(.disabled)
        let fired = try board.stagebox(["trigger", "call.hand"])
        #expect(fired.status == 1)
        #expect(fired.stderr == "stagebox: trigger call.hand is disabled\n", "\(fired.stderr)")
        let console = try board.stagebox(["console", "--execute", "trigger call.hand"])
        #expect(console.status == 1 && console.stdout.contains("trigger call.hand is disabled"), "\(console.stdout)")
    }

    /// A trigger whose own action failed (a take the recorder refused), and `update`, which
    /// only shows a state: both say so and exit 1, from the shell and at the console. A
    /// client's trigger in its error state is still just fired.
    @Test func aFailedActionAndAShownOnlyTriggerExitOne() throws {
        let board = try SimulatedBoard(config: "[recorder]\ndirectory = \"/nonexistent-stagebox-parent/takes\"\n")
        defer { _ = board.stop() }
        let record = try board.stagebox(["trigger", "record"])
        #expect(record.status == 1)
        #expect(record.stderr == "stagebox: trigger record fired, and its action failed: the log says why\n", "\(record.stderr)")
        let update = try board.stagebox(["trigger", "update"])
        #expect(update.status == 1)
        #expect(update.stderr.contains("the trigger 'update' only shows a state on an LED; firing it does nothing"), "\(update.stderr)")
        let console = try board.stagebox(["console", "--execute", "trigger update"])
        #expect(console.status == 1 && console.stdout.hasPrefix("refused: the trigger 'update' only shows"), "\(console.stdout)")
        let owner = try BusClient(name: "call", socketPath: board.socket)
        defer { owner.close() }
        let hand = try owner.createTrigger(name: "hand", title: "Raise a hand") { _ in }
        try hand.setState(.error)
        let fired = try board.stagebox(["console", "--execute", "trigger call.hand"])
        #expect(fired.status == 0 && fired.stdout == "call.hand: error\n", "\(fired.stdout)")
    }

    @Test func badCreateArgumentsAreRefusedWithTheUsage() throws {
        for (arguments, words) in [
            (["trigger", "--title", "T", "mute"], "--title needs --create"),
            (["trigger", "--create", "nodot"], "--create needs NAME as CLIENT.TRIGGER (for example call.mic-mute), not 'nodot'"),
            (["trigger", "--create", "call.a.b"], "invalid trigger name 'call.a.b'"),
            (["trigger", "--create", "call.t", "--title", String(repeating: "x", count: 65)], "at most 64 bytes"),
        ] {
            let r = try StageboxProcess.run(arguments)
            #expect(r.status == 64 && r.stderr.contains(words) && r.stderr.contains("Usage: stagebox trigger "), "\(arguments): \(r.stderr)")
        }
    }
}
