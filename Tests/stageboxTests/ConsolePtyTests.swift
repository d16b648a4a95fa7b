import CLinux
import Foundation
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `stagebox run --simulate` on a pseudo-terminal, typed at one character at a time.
@Suite struct ConsolePtyTests {
    /// Opens a pty pair: (master, slave).
    private func openPty() throws -> (Int32, Int32) {
        let master = posix_openpt(O_RDWR | O_NOCTTY)
        guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
            throw POSIXError(.ENOTTY)
        }
        let slave = open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw POSIXError(.ENOTTY) }
        return (master, slave)
    }

    /// Reads what the program wrote until `text` shows up (or 30 s pass: the first prompt waits
    /// for a whole board to start); returns all of it.
    private func read(_ master: Int32, until text: String, into screen: inout String) -> Bool {
        let end = Date().addingTimeInterval(30)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < end {
            if screen.contains(text) { return true }
            var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if n > 0 { screen += String(decoding: buffer[0..<n], as: UTF8.self) }
        }
        return screen.contains(text)
    }

    private func type(_ master: Int32, _ keys: String) {
        for b in Array(keys.utf8) {
            var byte = b
            _ = write(master, &byte, 1)
            usleep(5000)
        }
    }

    /// `stagebox run --simulate` with its stdin and stdout on a new pty; returns it and the master.
    private func runOnPty(_ s: Scratch, logOnPty: Bool = false) throws -> (Process, Int32) {
        let config = try s.write("sim.toml", "[audio]\nrt_priority = 0\n\n[bus]\nsocket = \"\(s.path("bus.sock"))\"\n")
        let (master, slave) = try openPty()
        let process = Process()
        process.executableURL = StageboxProcess.binary
        process.arguments = ["run", "--simulate", "--config", config]
        process.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardOutput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardError = logOnPty ? FileHandle(fileDescriptor: slave, closeOnDealloc: false) : Pipe()
        try process.run()
        close(slave)
        return (process, master)
    }

    @Test func aPersonTypesAtTheConsole() throws {
        let s = try Scratch()
        defer { s.remove() }
        let (process, master) = try runOnPty(s)
        defer { close(master) }
        defer { if process.isRunning { process.interrupt(); process.waitUntilExit() } }

        var screen = ""
        #expect(read(master, until: "stagebox> ", into: &screen), "a prompt: \(screen)")
        // Tab completes the command (status, not state); the answer is the status table.
        type(master, "statu\t\r")
        #expect(read(master, until: "clients     0", into: &screen), "\(screen)")
        // `config` says where the console really is.
        screen = ""
        type(master, "config\r")
        #expect(read(master, until: "(the terminal stagebox runs in)", into: &screen), "\(screen)")
        // A typo fixed with backspace.
        screen = ""
        type(master, "portz\u{7F}s\r")
        #expect(read(master, until: "codec.out  receiver  2", into: &screen), "\(screen)")
        // Ctrl-U drops the line; up arrow recalls the last command.
        screen = ""
        type(master, "garbage\u{15}\u{1B}[A\r")
        #expect(read(master, until: "codec.out  receiver  2", into: &screen), "history: \(screen)")
        #expect(!screen.contains("unknown command"))
        // Meters redraw until a key is pressed, then the prompt comes back.
        screen = ""
        type(master, "meters\r")
        #expect(read(master, until: "codec.in:1", into: &screen))
        usleep(600_000)
        type(master, "q")
        #expect(read(master, until: "stagebox> ", into: &screen))
        // Noise: random bytes, then the console still answers.
        var x: UInt32 = 3
        var noise = [UInt8]()
        for _ in 0..<4096 { x = x &* 1_664_525 &+ 1_013_904_223; noise.append(UInt8(truncatingIfNeeded: x >> 24) & 0x7F | 0x20) }
        noise.withUnsafeBytes { _ = write(master, $0.baseAddress, $0.count) }
        screen = ""
        type(master, "\u{15}status\r")
        #expect(read(master, until: "driver      simulated", into: &screen), "after noise: \(screen.suffix(300))")
    }

    /// The log on the same terminal is shown above the prompt, and what was being typed is
    /// drawn again below it: a log line never lands inside the typed line.
    @Test func logLinesGoAboveThePrompt() throws {
        let s = try Scratch()
        defer { s.remove() }
        let (process, master) = try runOnPty(s, logOnPty: true)
        defer { close(master) }
        defer { if process.isRunning { process.interrupt(); process.waitUntilExit() } }
        var screen = ""
        #expect(read(master, until: "stagebox> ", into: &screen), "a prompt: \(screen)")
        usleep(300_000)
        type(master, "sta")
        #expect(read(master, until: "sta", into: &screen))
        screen = ""
        // A client comes and goes: the board logs it.
        let ports = try StageboxProcess.run(["ports", "--socket", s.path("bus.sock")])
        #expect(ports.status == 0, "\(ports.stderr)")
        #expect(read(master, until: "left", into: &screen), "\(screen)")
        #expect(read(master, until: "left: \r\nstagebox> sta", into: &screen) || screen.hasSuffix("stagebox> sta"),
                "the typed line drawn again under the log: \(screen.debugDescription)")
        // What a terminal shows on each line: a carriage return starts it over (the pty turns
        // "\n" into "\r\n", so a line may end in "\r\r").
        // Split on bytes: "\r\n" is one Character to Swift.
        let lines = Array(screen.utf8).split(separator: 0x0A).map { line in
            let shown = line.split(separator: 0x0D).last ?? []
            return String(decoding: shown, as: UTF8.self).replacingOccurrences(of: "\u{1B}[K", with: "")
        }
        #expect(lines.contains { $0.contains("bus: hello from") }, "\(lines)")
        for line in lines where line.contains("bus: ") {
            #expect(!line.contains("stagebox> "), "a log line inside the prompt: \(line.debugDescription)")
        }
        #expect(screen.contains("\r\u{1B}[K"), "the input line is cleared before a log line")
        screen = ""
        type(master, "tus\r")
        #expect(read(master, until: "clients     0", into: &screen), "the typed line survived: \(screen)")
    }

    /// The README's first command, as a person ends it: Ctrl-C at the prompt stops the board
    /// cleanly (the statistics are printed, exit status 0), and so do Ctrl-D, `exit` and `quit`.
    @Test(arguments: ["\u{3}", "\u{4}", "exit\r", "quit\r"])
    func ctrlCAndFriendsStopTheBoard(keys: String) throws {
        let s = try Scratch()
        defer { s.remove() }
        let (process, master) = try runOnPty(s)
        defer { close(master) }
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        var screen = ""
        #expect(read(master, until: "stagebox> ", into: &screen), "a prompt: \(screen)")
        usleep(300_000)
        type(master, keys)
        #expect(read(master, until: "statistics: frames=", into: &screen), "stopped: \(screen.suffix(300))")
        let end = Date().addingTimeInterval(30)
        while process.isRunning && Date() < end { usleep(20_000) }
        #expect(!process.isRunning, "stagebox still runs after \(keys.debugDescription)")
        if !process.isRunning { #expect(process.terminationStatus == 0) }
    }
}
