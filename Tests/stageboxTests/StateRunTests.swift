import Foundation
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `[state]` in `stagebox run`, as people meet it: changes made from the command line survive
/// a SIGKILL, a client that comes back finds its routing, a damaged file is set aside.
@Suite(.serialized) struct StateRunTests {
    func config(_ dir: Scratch) -> String {
        "[state]\nfile = \"\(dir.path("state.toml"))\"\nwrite_delay_ms = 100\n"
    }

    func contents(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    @Test func changesFromTheCommandLineSurviveSIGKILL() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let first = try SimulatedBoard(config: config(dir))
        #expect(try first.stagebox(["disconnect", "codec.in", "codec.out"]).status == 0)
        #expect(try first.stagebox(["connect", "tone", "codec.out"]).status == 0)
        #expect(try first.stagebox(["mute", "codec.in"]).status == 0)
        #expect(waitFor(30) { contents(dir.path("state.toml")).contains("muted = [\"codec.in\"]") })
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        first.scratch.remove()

        let second = try SimulatedBoard(config: config(dir))
        let ports = try second.stagebox(["ports"]).stdout
        let triggers = try second.stagebox(["console", "--execute", "triggers"]).stdout
        let log = second.stop()
        #expect(ports.contains("tone -> codec.out") && !ports.contains("codec.in -> codec.out"), "\(ports)")
        #expect(ports.split(separator: "\n").contains { $0.hasPrefix("codec.in") && $0.contains("muted") },
                "\(ports)")
        #expect(triggers.split(separator: "\n").contains { $0.hasPrefix("mute ") && $0.contains("selected") }, "\(triggers)")
        #expect(log.contains("state: restored 1 connections, 1 removed, 1 mutes"), "\(log)")
    }

    /// The app is killed and started again: its port gets the connection made for it before.
    @Test func aClientThatComesBackFindsItsRouting() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let board = try SimulatedBoard(config: config(dir))
        defer { _ = board.stop() }
        func startApp() throws -> Process {
            try board.start(["record", dir.path("call.wav"), "--port", "call.in", "--seconds", "60"])
        }
        let app = try startApp()
        #expect(waitFor(30) { (try? board.stagebox(["ports"]).stdout.contains("call.in")) == true })
        #expect(try board.stagebox(["connect", "tone", "call.in"]).status == 0)
        kill(app.processIdentifier, SIGKILL)
        app.waitUntilExit()
        #expect(waitFor(30) { (try? board.stagebox(["ports"]).stdout.contains("call.in")) == false })
        let shown = try board.stagebox(["console", "--execute", "state show"]).stdout
        #expect(shown.contains("waiting for their ports: tone -> call.in"), "\(shown)")

        let again = try startApp()
        defer { again.interrupt(); again.waitUntilExit() }
        #expect(waitFor(30) { (try? board.stagebox(["ports"]).stdout.contains("tone -> call.in")) == true })
    }

    /// A state file cut short: logged, set aside, and the board runs on its configuration.
    @Test func aDamagedFileIsSetAside() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        try dir.write("state.toml", "version = 1\nconnections = [\"tone -> codec.out\"]\nmut")
        let board = try SimulatedBoard(config: config(dir))
        let ports = try board.stagebox(["ports"]).stdout
        let log = board.stop()
        #expect(ports.contains("codec.in -> codec.out") && !ports.contains("tone -> codec.out"), "\(ports)")
        #expect(log.contains("state: \(dir.path("state.toml")) cannot be read (line"), "\(log)")
        #expect(log.contains("set aside as \(dir.path("state.toml")).corrupt-"), "\(log)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(names.contains { $0.hasPrefix("state.toml.corrupt-") }, "\(names)")
    }
}
