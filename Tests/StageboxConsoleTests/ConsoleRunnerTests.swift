import CLinux
import Foundation
import Synchronization
import Testing
@testable import StageboxConsole
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The console runner on a pty, as on a serial port or a terminal.
@Suite struct ConsoleRunnerTests {
    final class Flag: Sendable { let raised = Atomic<Bool>(false) }

    private func pty() -> (Int32, Int32) {
        let master = posix_openpt(O_RDWR | O_NOCTTY)
        _ = grantpt(master); _ = unlockpt(master)
        let slave = open(ptsname(master), O_RDWR | O_NOCTTY)
        var raw = termios()
        tcgetattr(slave, &raw); cfmakeraw(&raw); tcsetattr(slave, TCSANOW, &raw)
        return (master, slave)
    }

    private func read(_ fd: Int32, until text: String) -> String {
        var screen = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = monotonicNanoseconds() + 5_000_000_000
        while !screen.contains(text) && monotonicNanoseconds() < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { screen += String(decoding: buffer[0..<n], as: UTF8.self) }
        }
        return screen
    }

    private func type(_ fd: Int32, _ text: String) {
        for b in Array(text.utf8) { var byte = b; _ = write(fd, &byte, 1); usleep(2000) }
    }

    /// On a serial console nothing typed stops the appliance: Ctrl-C drops the line, Ctrl-D does
    /// nothing, `exit` and `quit` say so, and the console goes on answering.
    @Test func aSerialConsoleNeverStopsTheAppliance() throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let (master, slave) = pty()
        defer { close(master); close(slave) }
        let runner = ConsoleRunner(console: Console(context: board), input: slave, output: slave)
        try runner.start()
        defer { runner.stop() }
        _ = read(master, until: "stagebox> ")
        type(master, "stat\u{3}")
        #expect(read(master, until: "^C\r\nstagebox> ").contains("^C"))
        type(master, "\u{4}exit\r")
        #expect(read(master, until: "runs until it is switched off").contains("switched off"))
        type(master, "quit\rstatus\r")
        #expect(read(master, until: "driver      simulated").contains("driver      simulated"), "still answering")
    }

    /// On the terminal stagebox was started from, Ctrl-C, Ctrl-D at an empty line, `exit` and
    /// `quit` each stop it, as they stop any program there.
    @Test(arguments: ["\u{3}", "\u{4}", "exit\r", "quit\r", "sta\u{3}"])
    func theTerminalStopsOnCtrlCCtrlDExitAndQuit(keys: String) throws {
        let board = try RunningBoard()
        defer { board.stop() }
        let (master, slave) = pty()
        defer { close(master); close(slave) }
        let stopped = Flag()
        let runner = ConsoleRunner(console: Console(context: board), input: slave, output: slave,
                                   quit: { stopped.raised.store(true, ordering: .relaxed) })
        try runner.start()
        defer { runner.stop() }
        _ = read(master, until: "stagebox> ")
        type(master, keys)
        #expect(read(master, until: "stopping").contains("stopping"))
        // The runner says "stopping" and then asks to quit: the flag follows the word, soon.
        var raised = false
        for _ in 0..<1500 where !raised {
            raised = stopped.raised.load(ordering: .relaxed)
            if !raised { usleep(20_000) }
        }
        #expect(raised, "the quit callback ran within 30 s of 'stopping'")
    }
}
