import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite(.serialized) struct HostileClientTests {
    /// The test helper built next to the test bundle.
    static var hostileClient: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("stagebox-hostile-client")
    }

    /// A client process tries to shrink its rings' shared memory (a SIGBUS for the server, were it
    /// allowed), makes its wakeups blocking and floods them, then writes random and extreme values
    /// over its rings' headers and data for five seconds, while an honest `stagebox record` takes
    /// the codec inputs. The server stays
    /// up, silences and disconnects the hostile client with one log line naming it, and the
    /// honest take is complete: every frame, no underrun, no overrun, no gap in its sine.
    @Test(arguments: [7, 8, 9])
    func aClientThatScribblesOverItsRingsIsContained(seed: Int) throws {
        let board = try SimulatedBoard()
        var log = ""
        defer { _ = log }
        let take = board.scratch.path("honest.wav")
        let recorder = try board.start(["record", take, "--port", "honest.in", "--from", "codec.in", "--seconds", "8"])
        #expect(eventually(30) { (try? board.stagebox(["ports"]).stdout.contains("honest.in")) == true })

        let hostile = Process()
        hostile.executableURL = Self.hostileClient
        hostile.arguments = [board.socket, "5", "\(seed)"]
        hostile.standardOutput = Pipe()
        hostile.standardError = Pipe()
        try hostile.run()
        hostile.waitUntilExit()
        let said = output(of: hostile)
        #expect(said.stdout.contains("hostile: 4 ring mappings"), "\(said.stdout) \(said.stderr)")
        #expect(said.stdout.contains("hostile: truncation refused for 4 of 4 rings"), "\(said.stdout)")
        #expect(said.stdout.contains("hostile: 4 wakeups made blocking and flooded"), "\(said.stdout)")
        #expect(said.stdout.contains("pokes"), "the hostile client ran to its end: \(said.stdout) \(said.stderr)")
        #expect(board.isRunning, "stagebox survived")
        let ports = try board.stagebox(["ports"])
        #expect(ports.status == 0 && !ports.stdout.contains("hostile."), "the hostile client is gone: \(ports.stdout)")

        recorder.waitUntilExit()
        let recorded = output(of: recorder).stdout
        #expect(recorder.terminationStatus == 0)
        #expect(recorded.contains("recorded 384000 frames"), "\(recorded)")
        #expect(recorded.contains("underruns 0, overruns 0"), "\(recorded)")
        // The simulated inputs hear a 440 Hz sine at -12 dBFS: no step between two samples is
        // larger than the sine's own steepest, unless the take has a gap.
        let samples = try AudioFileReader(path: take).readAll()
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let first = left.firstIndex { $0 != 0 } ?? 0
        let steepest = Float(2 * Double.pi * 440 / 48000 * 0.2512) * 1.01
        // From the end of the connection's one-period fade-in, whose ramp adds to the slope.
        let jump = (first + 128..<left.count).first { abs(left[$0] - left[$0 - 1]) > steepest }
        let around = jump.map { j in (max(0, j - 6)..<min(left.count, j + 6)).map { String(format: "%.4f", left[$0]) } } ?? []
        #expect(jump == nil, "a gap in the honest take at frame \(jump ?? -1) (first sound at \(first)): \(around)")

        log = board.stop()
        let lines = log.split(separator: "\n").filter { $0.contains("hostile") && $0.contains("corrupt") }
        #expect(lines.count == 1, "one log line names the client:\n\(log.suffix(2000))")
    }
}
