import CLinux
import Foundation
import StageboxClient
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct StalledTerminalTests {
    /// `stagebox run` on a terminal that nobody reads for 30 s (a pty whose other end is never
    /// read, as a stuck serial line or a detached session), while clients come and go hundreds
    /// of times a second so that it has plenty to log. It keeps feeding the watchdog (a file
    /// here: every feed is a byte), keeps processing audio, and answers on the bus.
    @Test func aTerminalThatDoesNotReadStopsNothing() throws {
        let s = try Scratch()
        defer { s.remove() }
        let dog = s.path("watchdog")
        _ = FileManager.default.createFile(atPath: dog, contents: nil)
        let socket = s.path("bus.sock")
        let config = try s.write("sim.toml", """
            [audio]
            rt_priority = 0

            [bus]
            socket = "\(socket)"

            [watchdog]
            device = "\(dog)"
            timeout = 5
            """)
        let master = posix_openpt(O_RDWR | O_NOCTTY)
        #expect(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0)
        let slave = open(ptsname(master), O_RDWR | O_NOCTTY)
        defer { close(master) }
        let process = Process()
        process.executableURL = StageboxProcess.binary
        process.arguments = ["run", "--simulate", "--config", config]
        // Everything on the terminal, as on a console: the log too.
        let tty = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = tty
        process.standardOutput = tty
        process.standardError = tty
        try process.run()
        close(slave)
        #expect(eventually(30) { FileManager.default.fileExists(atPath: socket) })

        // Log lines, many: every client that comes and goes is three.
        let churn = Thread {
            let end = Date().addingTimeInterval(30)
            while Date() < end {
                if let c = try? BusClient(name: "churn", socketPath: socket) { c.close() }
            }
        }
        churn.start()
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: dog)[.size] as? Int) ?? 0 }
        func periods() -> Int? {
            guard let r = try? StageboxProcess.run(["console", "--execute", "status", "--socket", socket], timeout: 10),
                  let line = r.stdout.split(separator: "\n").first(where: { $0.hasPrefix("dsp load") }),
                  let part = line.split(separator: ";").last else { return nil }
            return Int(part.split(separator: " ").first ?? "")
        }
        sleep(10)
        let fed10 = size(), periods10 = periods()
        let firstAnswered = Date()
        sleep(20)
        let secondAsked = Date()
        let fed30 = size(), periods30 = periods()
        print("stalled terminal: watchdog fed \(fed10) times by 10 s, \(fed30) by 30 s; periods \(periods10 ?? -1) → \(periods30 ?? -1)")
        #expect(fed30 > fed10 + 10, "the watchdog was fed \(fed10) times by 10 s and \(fed30) by 30 s")
        #expect(periods10 != nil && periods30 != nil, "the bus answers")
        if let a = periods10, let b = periods30 {
            // 750 periods a second (64 frames at 48 kHz) between the two answers: at least the
            // time from the first answer to the second question (each one launches a program).
            let expected = Int(750 * secondAsked.timeIntervalSince(firstAnswered))
            #expect(b - a > expected * 8 / 10, "audio went on: \(a) → \(b) periods, at least \(expected) expected")
        }
        // Let it go: read what it wrote, then stop it.
        _ = fcntl(master, F_SETFL, O_NONBLOCK)
        var buffer = [UInt8](repeating: 0, count: 65536)
        var text = ""
        let until = Date().addingTimeInterval(3)
        while Date() < until {
            let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            if n > 0 { text += String(decoding: buffer[0..<n], as: UTF8.self) } else { usleep(10_000) }
        }
        process.interrupt()
        let stop = Date().addingTimeInterval(10)
        while process.isRunning && Date() < stop {
            let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            if n > 0 { text += String(decoding: buffer[0..<n], as: UTF8.self) } else { usleep(10_000) }
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(text.contains("log lines were dropped: the log output did not drain"), "\(text.suffix(2000))")
    }
}
