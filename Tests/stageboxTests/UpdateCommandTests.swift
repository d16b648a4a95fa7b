import Foundation
import StageboxTestSupport
import Testing

/// `stagebox update` against a simulated board whose RAUC is a stand-in (the real one runs on
/// the emulated Pi: tools/vm/scenarios/pi-update): the progress a person sees, the exit status,
/// the console's `update` and `status`, and the refusals of a system without RAUC.
@Suite(.serialized) struct UpdateCommandTests {
    @Test func anInstallIsFollowedToTheEndWithItsProgress() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let bundle = try rauc.scratch.write("update.raucb", "a bundle")
        let board = try SimulatedBoard(environment: [
            "STAGEBOX_RAUC": rauc.path, "STAGEBOX_RELEASE_FILE": rauc.scratch.path("release"),
            "STAGEBOX_REBOOT": "/bin/true", "STAGEBOX_MARK_GOOD_AFTER": "1",
        ])
        defer { _ = board.stop() }
        #expect(waitFor(30) { (try? board.stagebox(["console", "--execute", "status"]).stdout)?.contains("system      slot A, 0.1.0-1, marked good") == true })
        let run = try board.stagebox(["update", bundle])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "installing \(bundle) into the other slot; `update` shows the progress")
        #expect(lines.last == "0.1.0-2 installed in the other slot; it runs after the reboot")
        #expect(rauc.calls.contains("install \(bundle)"))
        let slots = try board.stagebox(["update"]).stdout
        #expect(slots.contains("slot B  0.0.9 it's old  (good)"), "\(slots)")
        #expect(triggerState(try board.stagebox(["console", "--execute", "triggers"]).stdout, "update") == "selected")
    }

    @Test func aFailedInstallExitsWithItsReason() throws {
        let rauc = try RaucStandIn(installFails: "Failed to verify bundle signature: certificate verify failed")
        defer { rauc.scratch.remove() }
        let bundle = try rauc.scratch.write("update.raucb", "a bundle")
        let board = try SimulatedBoard(environment: [
            "STAGEBOX_RAUC": rauc.path, "STAGEBOX_RELEASE_FILE": rauc.scratch.path("release"), "STAGEBOX_REBOOT": "",
        ])
        defer { _ = board.stop() }
        let run = try board.stagebox(["update", bundle])
        #expect(run.status == 1)
        #expect(run.stdout.hasSuffix("the last update failed: installing \(bundle): Failed to verify bundle signature: certificate verify failed\n"), "\(run.stdout)")
        #expect(triggerState(try board.stagebox(["console", "--execute", "triggers"]).stdout, "update") == "error")
    }

    /// stagebox killed mid-install (a crash, a power cut): the command does not take the closed
    /// connection for the reboot into the update. A relative FILE is the caller's.
    @Test func aConnectionThatClosesMidInstallIsAFailure() throws {
        let rauc = try RaucStandIn(copySeconds: 10) // the stand-in outlives the killed board; its pipe ends with it
        defer { rauc.scratch.remove() }
        _ = try rauc.scratch.write("update.raucb", "a bundle")
        let board = try SimulatedBoard(environment: [
            "STAGEBOX_RAUC": rauc.path, "STAGEBOX_RELEASE_FILE": rauc.scratch.path("release"), "STAGEBOX_REBOOT": "",
        ])
        defer { _ = board.stop() }
        let update = Process()
        update.executableURL = StageboxProcess.binary
        update.arguments = ["update", "update.raucb", "--socket", board.socket]
        update.currentDirectoryURL = rauc.scratch.url
        update.standardOutput = Pipe()
        update.standardError = Pipe()
        try update.run()
        // The command sends the path from its folder as getcwd gives it (symlinks resolved).
        #expect(waitFor(30) { rauc.calls.contains { $0.hasPrefix("install /") && $0.hasSuffix("/update.raucb") } }, "\(rauc.calls)")
        #expect(waitFor(30) { (try? board.stagebox(["console", "--execute", "update"]).stdout)?.contains("40%") == true })
        usleep(1_500_000) // the command asks for the phase twice a second: it has seen 40% now
        kill(board.process.processIdentifier, SIGKILL)
        update.waitUntilExit()
        let (stdout, stderr) = output(of: update)
        #expect(update.terminationStatus == 1, "\(stdout)\(stderr)")
        #expect(stderr.contains("stagebox: no answer before the install ended ("), "\(stderr)")
        #expect(stderr.contains("stagebox stopped or the box restarted"), "\(stderr)")
        #expect(!stdout.contains("installed in the other slot"), "\(stdout)")
    }

    /// A reboot that ends stagebox at once (a real one takes a moment): the updater waits until
    /// `update` has answered with the install's end, so the command saw it and exits 0.
    @Test func aRebootThatEndsStageboxAtOnceStillShowsTheInstallsEnd() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let bundle = try rauc.scratch.write("update.raucb", "a bundle")
        let reboot = try rauc.scratch.writeExecutable("reboot", "#!/bin/sh\nkill -KILL $PPID\n")
        let board = try SimulatedBoard(environment: [
            "STAGEBOX_RAUC": rauc.path, "STAGEBOX_RELEASE_FILE": rauc.scratch.path("release"), "STAGEBOX_REBOOT": reboot,
        ])
        defer { _ = board.stop() }
        let run = try board.stagebox(["update", bundle])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.hasSuffix("0.1.0-2 installed in the other slot; it runs after the reboot\n"), "\(run.stdout)")
        #expect(waitFor(10) { !board.isRunning }, "the reboot stand-in ended stagebox")
    }

    @Test func aPathWithASpaceIsRefusedBeforeAnythingIsAsked() throws {
        let run = try StageboxProcess.run(["update", "/tmp/my update.raucb", "--socket", "/nonexistent.sock"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("the update bundle '/tmp/my update.raucb' has a space in it"), "\(run.stderr)")
        let bundle = try StageboxProcess.run(["diag", "bundle", "/tmp/a b", "--socket", "/nonexistent.sock"])
        #expect(bundle.status == 64)
        #expect(bundle.stderr.contains("the folder '/tmp/a b' has a space in it"), "\(bundle.stderr)")
    }

    @Test func withoutRaucUpdatesAreRefusedByName() throws {
        let board = try SimulatedBoard(environment: ["STAGEBOX_RAUC": "/nonexistent/rauc"])
        defer { _ = board.stop() }
        let run = try board.stagebox(["update", "/tmp/x.raucb"])
        #expect(run.status == 1)
        #expect(run.stdout == "refused: this system has no RAUC (/nonexistent/rauc): updates need the card\n")
        let bad = try board.stagebox(["update", "--force"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--force needs a FILE"))
    }
}

/// The state `triggers` shows for `name` (its table's second column, however wide the first).
func triggerState(_ table: String, _ name: String) -> String? {
    for line in table.split(separator: "\n") {
        let words = line.split(separator: " ").map(String.init)
        if words.count > 1 && words[0] == name { return words[1] }
    }
    return nil
}
