import Foundation
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `diag bundle` as a person asked for their logs runs it: at the console, and as
/// `stagebox diag bundle` from a shell. One file, every part in it, under 1 MB, and no secret
/// in it, though one was planted in the kernel's log (a Wi-Fi driver logging its key, as root
/// can make it) and in a client's name.
@Suite(.serialized) struct SupportBundleRunTests {
    @Test func theBundleHoldsEveryPartAndNoSecret() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let board = try SimulatedBoard(config: "[health]\nwarn_temp_c = 70\n")
        defer { _ = board.stop() }
        let planted = "planted-\(UUID().uuidString.prefix(8))"
        if getuid() == 0, let kmsg = FileHandle(forWritingAtPath: "/dev/kmsg") {
            kmsg.write("stagebox-test: wlan0: psk=\(planted)\n".data(using: .utf8)!)
            try? kmsg.close()
        }
        // A client asking for a port named like a setting: refused, and its name quoted in the log.
        let client = try board.start(["record", dir.path("a.wav"), "--port", "token=\(planted)", "--seconds", "60"])
        client.waitUntilExit()

        let before = try board.stagebox(["console", "--execute", "status"]).stdout
        let watch = StallWatch()
        let made = try board.stagebox(["diag", "bundle", dir.path("")])
        let stalls = watch.finish()
        let after = try board.stagebox(["console", "--execute", "status"]).stdout
        #expect(made.status == 0, "\(made.stdout)\(made.stderr)")
        print("support bundle: \(made.stdout.trimmingCharacters(in: .newlines))")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).first { $0.hasPrefix("stagebox-support-") })
        #expect(made.stdout.contains(name))
        let text = try String(contentsOfFile: dir.path(name), encoding: .utf8)
        #expect(text.utf8.count < 1_000_000)
        for part in ["== stagebox support bundle ==\nstagebox    ", "\nkernel      Linux version ", "== status ==\nversion ",
                     "== config ==\nconfiguration from ", "[health] warn_temp_c=70.0", "== ports ==", "== clients ==",
                     "== xruns ==", "== health ==", "== takes ==", "== storage ==", "== log (the last 2000 lines) ==",
                     "== ALSA cards (/proc/asound/cards) ==", "== kernel log (the last 300 lines) =="] {
            #expect(text.contains(part), "no \(part) in the bundle")
        }
        #expect(!text.contains(planted), "a secret in the bundle")
        if text.contains("invalid port name") { #expect(text.contains("'token=<removed>'"), "the refusal is there, the secret not") }
        if getuid() == 0 { #expect(text.contains("stagebox-test: wlan0: psk=<removed>")) }
        // No xrun while it was made: judged when the machine did not stall meanwhile.
        func xruns(_ status: String) -> String? {
            status.split(separator: "\n").first { $0.hasPrefix("xruns") }.map { String($0).components(separatedBy: ", late").first ?? "" }
        }
        print(StallWatch.report(stalls, "support bundle"))
        if stalls.isEmpty { #expect(xruns(before) != nil && xruns(before) == xruns(after), "\(before)\n\(after)") }
    }

    /// No stagebox runs (its configuration is broken, say): the command writes what it gathers
    /// itself beside that configuration file, as on the card's BOOT, with the file's problems.
    @Test func withoutAStageboxTheBundleGoesBesideEvenABrokenConfiguration() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let config = try dir.write("stagebox.toml", "[bus]\nsocket = \"\(dir.path("none.sock"))\"\n[audio]\nrate = 1\n")
        let made = try StageboxProcess.run(["diag", "bundle", "--config", config, "--socket", dir.path("none.sock")])
        #expect(made.status == 0, "\(made.stdout)\(made.stderr)")
        #expect(made.stdout.contains("stagebox is not running"), "\(made.stdout)")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).first { $0.hasPrefix("stagebox-support-") },
                                "no bundle beside \(config): \(made.stdout)")
        let text = try String(contentsOfFile: dir.path(name), encoding: .utf8)
        #expect(text.contains("audio.rate"), "the configuration's problem is in the bundle")
    }

    @Test func aFolderThatCannotBeWrittenIsRefusedByName() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let made = try board.stagebox(["console", "--execute", "diag bundle /nonexistent-stagebox-folder"])
        #expect(made.status != 0)
        #expect(made.stdout.contains("refused: the support bundle cannot be written: ") && made.stdout.contains("/nonexistent-stagebox-folder"),
                "\(made.stdout)")
    }
}
