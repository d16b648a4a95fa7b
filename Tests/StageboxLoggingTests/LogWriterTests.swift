import StageboxLogging
import Testing
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct LogWriterTests {
    /// An output that does not drain (a pipe nobody reads, as a pty nobody reads or a stuck
    /// serial line): logging goes on at full speed, the lines that do not fit are dropped and
    /// counted, and once the output drains again the count is written before the next line.
    @Test func anOutputThatDoesNotDrainNeverBlocksTheLogger() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        signal(SIGPIPE, SIG_IGN) // the pipe is closed under the writer at the end
        let writer = LogWriter(output: fds[1], capacity: 64)
        let line = String(repeating: "x", count: 200)
        let start = monotonicNanoseconds()
        for i in 0..<20_000 { writer.write("\(i) \(line)") }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        // A pipe holds 64 KiB: about 320 of these lines; the queue 64 more. The rest are dropped.
        #expect(writer.droppedTotal.load(ordering: .relaxed) > 19_000)
        #expect(seconds < 10, "20 000 lines took \(seconds) s: the logger waited on the output")

        // Drain the pipe: the writer finishes its line, reports what it dropped, and goes on.
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let deadline = monotonicNanoseconds() + 10_000_000_000
        var wrote = false
        while !text.contains("after the stall") && monotonicNanoseconds() < deadline {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n > 0 { text += String(decoding: buffer[0..<n], as: UTF8.self) } else { usleep(1000) }
            // Once the queue has room again, a new line gets in.
            if !wrote && writer.pending < writer.capacity { wrote = writer.write("after the stall") }
        }
        #expect(text.contains("log lines were dropped: the log output did not drain"))
        #expect(text.contains("after the stall"))
        let lines = text.split(separator: "\n")
        let report = lines.firstIndex { $0.contains("dropped") }
        let after = lines.firstIndex { $0.contains("after the stall") }
        #expect(report != nil && after != nil && report! < after!, "the count comes before what follows it")
        writer.close(waitingUpTo: 0)
        close(fds[0]); close(fds[1])
    }

    @Test func linesComeOutWholeAndInOrder() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writer = LogWriter(output: fds[1], capacity: 1024)
        for i in 0..<500 { writer.write("line \(i)") }
        writer.close(waitingUpTo: 5)
        close(fds[1])
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            all += buffer[0..<n]
        }
        close(fds[0])
        let lines = String(decoding: all, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == (0..<500).map { "line \($0)" })
    }
}
