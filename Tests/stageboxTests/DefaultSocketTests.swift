import Foundation
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `stagebox run` and the client commands meet at the same socket when none is named.
@Suite struct DefaultSocketCommandTests {
    /// Starts a simulated board whose configuration names no socket, in `environment`.
    private func board(_ s: Scratch, environment: [String: String]) throws -> Process {
        let config = try s.write("board.toml", "[audio]\nrt_priority = 0\n")
        let p = Process()
        p.executableURL = StageboxProcess.binary
        p.arguments = ["run", "--simulate", "--config", config]
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        p.standardOutput = Pipe()
        p.standardError = Pipe()
        try p.run()
        return p
    }

    private func portsWhenUp(_ environment: [String: String]) throws -> StageboxProcess.Result {
        var r = try StageboxProcess.run(["ports"], environment: environment)
        for _ in 0..<100 where r.status != 0 {
            usleep(50_000)
            r = try StageboxProcess.run(["ports"], environment: environment)
        }
        return r
    }

    @Test func stageboxSocketIsSharedByTheBoardAndItsClients() throws {
        let s = try Scratch()
        defer { s.remove() }
        let env = ["STAGEBOX_SOCKET": s.path("env.sock")]
        let p = try board(s, environment: env)
        defer { p.interrupt(); p.waitUntilExit() }
        let r = try portsWhenUp(env)
        #expect(r.status == 0 && r.stdout.contains("codec.in"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: s.path("env.sock")))
    }

    /// For a user: $XDG_RUNTIME_DIR/stagebox/bus.sock, the folder made by the board.
    @Test(.enabled(if: geteuid() != 0, "root uses /run/stagebox/bus.sock, the appliance's"))
    func aUserMeetsInTheRuntimeDirectory() throws {
        let s = try Scratch()
        defer { s.remove() }
        let env = ["STAGEBOX_SOCKET": "", "XDG_RUNTIME_DIR": s.url.path]
        let p = try board(s, environment: env)
        defer { p.interrupt(); p.waitUntilExit() }
        let r = try portsWhenUp(env)
        #expect(r.status == 0 && r.stdout.contains("codec.in"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: s.path("stagebox/bus.sock")))
    }
}
