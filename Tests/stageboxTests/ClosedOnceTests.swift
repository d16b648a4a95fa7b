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
    /// Runs `stagebox` under strace and returns its stderr and strace's refused closes.
    private func traced(_ arguments: [String], scratch: Scratch) throws -> (stderr: String, refused: [String]) {
        let trace = scratch.path("trace-\(UUID().uuidString).txt")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = ["-f", "-qq", "-e", "trace=close", "-e", "status=failed", "-o", trace,
                             StageboxProcess.binary.path] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        return (stderr, lines.split(separator: "\n").map(String.init).filter { $0.contains("EBADF") })
    }

    @Test func aClientThatFindsNoServerClosesItsSocketOnce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (stderr, refused) = try traced(["ports", "--socket", scratch.path("nobody.sock")], scratch: scratch)
        #expect(stderr.contains("no stagebox is running"), "\(stderr)")
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
            let c = accept(fd, nil, nil)
            if c >= 0 { close(c) }
        }
        rude.start()
        let (stderr, refused) = try traced(["ports", "--socket", path], scratch: scratch)
        #expect(!stderr.isEmpty && !stderr.contains("no stagebox is running"), "\(stderr)")
        #expect(refused.isEmpty, "closed twice: \(refused)")
    }
}
