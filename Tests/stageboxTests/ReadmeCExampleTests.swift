import Foundation
import StageboxTestSupport
import Testing

/// The README's `cc` line, as written, builds a program that starts and talks to a board.
@Suite struct ReadmeCExampleTests {
    @Test func theReadmesCcLineBuildsAProgramThatRuns() throws {
        let readme = try String(contentsOf: CExamples.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("cc -I include examples/c/") })
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let program = board.scratch.path("vonage_agora")
        // The README's line, run from the repository, with only the build folder and the
        // output put where this test run has them.
        let command = String(line)
            .replacingOccurrences(of: "$PWD/.build/debug", with: CExamples.buildDirectory.path)
            .replacingOccurrences(of: "-L .build/debug", with: "-L \(CExamples.buildDirectory.path)")
            .replacingOccurrences(of: "-o vonage_agora", with: "-o \(program)")
        let built = Process()
        built.executableURL = URL(fileURLWithPath: "/bin/sh")
        built.arguments = ["-c", "cd '\(CExamples.repository.path)' && \(command)"]
        try built.run()
        built.waitUntilExit()
        #expect(built.terminationStatus == 0, "\(command)")
        let r = try CExamples.run(program, [board.socket, "1"])
        #expect(r.status == 0, "it starts and finds libStageboxClientC without LD_LIBRARY_PATH: \(r.output)")
    }
}
