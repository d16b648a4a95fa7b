import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the console on a pair of descriptors (a serial port, or stdin/stdout) on a thread of
/// its own. It never blocks on output: what a full buffer or an unplugged cable cannot take is
/// dropped, so a console nobody reads cannot hold the rest of stagebox up.
///
/// `@unchecked Sendable`: the editor and the loop's state belong to the runner's thread;
/// `start` and `stop` run on the thread that owns the runner; what other threads reach
/// (`printAbove`, `running`) goes through the `terminal` mutex or an atomic.
public final class ConsoleRunner: @unchecked Sendable {
    private let console: Console
    private let input: Int32
    private let output: Int32
    private var editor: LineEditor
    private let running = Atomic<Bool>(false)
    private var loop: ServiceLoop?
    private var savedTerminal: termios?
    private var lastNote: Int64 = 0
    /// Stops stagebox; nil where the console must never stop it (a serial console).
    private let quit: (@Sendable () -> Void)?
    /// What the input line shows now (the prompt and what is typed; empty while a command
    /// answers), under the lock that keeps the runner's output and log lines apart.
    private let terminal = Mutex<String>("")
    /// Stopping stagebox was asked for here: the prompt is not shown again.
    private var quitting = false

    /// - Parameters:
    ///   - rawTerminal: put `input` in raw mode (no echo, no line buffering) while running, for a
    ///     terminal on stdin; a serial port is put in raw mode when it is opened.
    ///   - quit: how Ctrl-C, Ctrl-D at an empty line, `exit` and `quit` stop stagebox: given for
    ///     the terminal stagebox was started from, as any program there stops. Nil on a serial
    ///     console, where Ctrl-C only drops the line and nothing typed stops the appliance.
    public init(console: Console, input: Int32, output: Int32, rawTerminal: Bool = false,
                quit: (@Sendable () -> Void)? = nil) {
        self.console = console
        self.quit = quit
        self.input = input
        self.output = output
        let c = console
        editor = LineEditor(completions: { c.completions(for: $0) })
        if rawTerminal {
            var t = termios()
            if tcgetattr(input, &t) == 0 {
                savedTerminal = t
                var raw = t
                cfmakeraw(&raw)
                raw.c_oflag |= tcflag_t(OPOST | ONLCR)
                tcsetattr(input, TCSANOW, &raw)
            }
        }
    }

    deinit { stop() }

    /// Starts the runner's thread. Throws when the thread cannot be started.
    public func start() throws(SystemCallError) {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        send("Stagebox console. Type help.\r\n" + editor.prompt)
        showing(editor.prompt)
        do {
            let started = try ServiceLoop(named: "the console")
            try started.start { [self] turn in self.turn(turn) }
            loop = started
        } catch {
            running.store(false, ordering: .relaxed)
            throw error
        }
    }

    /// Shows `text` (a log line) above the input line and draws the input line again below
    /// it, so that log output never lands inside what is being typed.
    public func printAbove(_ text: String) {
        terminal.withLock { shown in
            write(Array(("\r\u{1B}[K" + text.replacingNewlines + "\r\n" + shown).utf8))
        }
    }

    private func showing(_ text: String) { terminal.withLock { $0 = text } }

    public func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        loop?.stop()
        loop = nil
        if var t = savedTerminal { tcsetattr(input, TCSANOW, &t) }
    }

    /// One turn of the console's thread: what the input has is read and handled.
    private func turn(_ turn: ServiceLoop.Turn) -> ServiceLoop.Next {
        // A hang-up or an error with nothing to read: the other end went away; look again
        // in a fifth of a second rather than spin on a descriptor that is always ready.
        let later = ServiceLoop.Next(deadline: monotonicNanoseconds() + 200_000_000)
        guard turn.revents(of: input) != 0 else { return turn.waitFailed == nil ? .reading([input]) : later }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if n == 0 { return later }
        if n < 0 { return errno == EAGAIN || errno == EINTR ? .reading([input]) : later }
        for byte in buffer[0..<n] { handle(byte) }
        return .reading([input])
    }

    private func handle(_ byte: UInt8) {
        guard !quitting else { return }
        let (echo, event) = editor.feed(byte)
        if event != nil { showing("") } // a command answers: log lines go above its answer
        defer { if !quitting { showing(editor.prompt + editor.line) } }
        if !echo.isEmpty { send(echo) }
        switch event {
        case .line(let line)? where ["exit", "quit"].contains(line.trimmingSpaces):
            if let quit {
                stopStagebox(quit)
            } else {
                send("the console cannot stop the appliance; it runs until it is switched off\r\n" + editor.prompt)
            }
        case .line(let line)?:
            if line.trimmingSpaces == "meters" {
                meters()
            } else {
                let answer = console.execute(line)
                send((answer.isEmpty ? "" : answer.replacingNewlines + "\r\n") + editor.prompt)
            }
        case .cancelled?, .endOfInput?:
            if let quit {
                stopStagebox(quit)
            } else {
                send(editor.prompt)
            }
        case .discarded(let note)?:
            // Noise from a mis-set baud rate: a short note now and then, never a flood.
            let now = monotonicNanoseconds() / 1_000_000_000
            if now != lastNote {
                lastNote = now
                send("\r\n(\(note))\r\n" + editor.prompt + editor.line)
            }
        case nil:
            break
        }
    }

    /// Stops stagebox from its terminal: no prompt again, the log goes on on plain lines.
    private func stopStagebox(_ quit: @Sendable () -> Void) {
        quitting = true
        send("stopping\r\n")
        showing("")
        quit()
    }

    /// Live meters, redrawn in place four times a second until a key is pressed.
    private func meters() {
        var drawn = 0
        while running.load(ordering: .relaxed) {
            let text = console.meters()
            let lines = text.split(separator: "\n").count
            var frame = drawn > 0 ? "\u{1B}[\(drawn)A\r" : ""
            frame += text.split(separator: "\n").map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\r\n"
            send(frame)
            drawn = lines
            if wait(for: input, timeoutMs: 250) {
                var discard = [UInt8](repeating: 0, count: 64)
                _ = discard.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                break
            }
        }
        send(editor.prompt)
    }

    private func wait(for fd: Int32, timeoutMs: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, timeoutMs) > 0
    }

    private func send(_ text: String) { send(Array(text.utf8)) }

    private func send(_ bytes: [UInt8]) { terminal.withLock { _ in write(bytes) } }

    /// Writes what the output takes within 50 ms; the rest is dropped.
    private func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            var p = pollfd(fd: output, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, 50) > 0, p.revents & Int16(POLLOUT) != 0 else { return }
            let n = bytes.withUnsafeBytes { writeBytes(output, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if errno == EAGAIN || errno == EINTR { continue } else { return } }
            offset += n
        }
    }
}

/// write(2), out of reach of `ConsoleRunner.write`'s name.
private func writeBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }

extension String {
    var replacingNewlines: String { split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n") }
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
