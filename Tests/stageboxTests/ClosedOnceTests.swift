import Foundation
import StageboxSystem
import StageboxTestSupport
import Testing

/// A descriptor closed twice is a bug that shows up elsewhere: between the two closes another
/// thread may be given the same number, and the second close takes its file away. (A CI run
/// failed that way: a shared ring's memfd was closed under it by a failed bus connection.)
/// These run the client's ways of failing under strace, a tracer nobody here wrote, and count
/// the closes the kernel refused for a bad descriptor.
@Suite struct ClosedOnceTests {
    /// Runs `stagebox` under strace and returns its exit status (strace passes the program's
    /// on), its stderr and strace's refused closes. Every close is traced, and the trace must
    /// show some, so a strace that could not trace is not taken for a clean run.
    private func traced(_ arguments: [String], scratch: Scratch) throws -> (status: Int32, stderr: String, refused: [String]) {
        let trace = scratch.path("trace-\(UUID().uuidString).txt")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = ["-f", "-qq", "-e", "trace=close", "-o", trace,
                             StageboxProcess.binary.path] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.contains { $0.contains("close(") && $0.hasSuffix("= 0") }, "strace traced no close: \(stderr)")
        return (process.terminationStatus, stderr, lines.map(String.init).filter { $0.contains("EBADF") })
    }

    @Test func aClientThatFindsNoServerClosesItsSocketOnce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (status, stderr, refused) = try traced(["ports", "--socket", scratch.path("nobody.sock")], scratch: scratch)
        #expect(status == 1 && stderr.contains("no stagebox is running"), "\(status): \(stderr)")
        #expect(refused.isEmpty, "closed twice: \(refused)")
    }

    /// A server that hangs up before its welcome: the reader thread has started by then, so
    /// this is the failing init's other way out.
    @Test func aClientWhoseServerHangsUpClosesItsSocketOnce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("rude.sock")
        let listener = try UnixSocket.stream(nonBlocking: false)
        defer { try? listener.close() }
        try UnixSocketAddress(path: path).bind(listener)
        #expect(listen(listener.rawValue, 4) == 0)
        let fd = listener.rawValue
        let rude = Thread {
            // Waits a while only: closing the listener would not end an accept that waits.
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 20_000) == 1 else { return }
            let c = accept(fd, nil, nil)
            if c >= 0 { close(c) }
        }
        rude.start()
        let (status, stderr, refused) = try traced(["ports", "--socket", path], scratch: scratch)
        #expect(status == 1 && stderr.contains("connection to stagebox lost"), "\(status): \(stderr)")
        #expect(refused.isEmpty, "closed twice: \(refused)")
    }
}
