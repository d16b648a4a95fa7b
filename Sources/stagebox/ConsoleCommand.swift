import ArgumentParser
import StageboxClient
import StageboxConsole
import StageboxProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `stagebox console`: the serial console's shell over the bus socket, for use over SSH.
struct ConsoleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "Open the diagnostics shell of a running stagebox over its bus socket.")
    @OptionGroup var bus: BusOptions
    @Option(help: "Run these commands (separated by ';'), print the answers and exit, instead of a shell: exit 1 when one was refused (unknown, wrong usage, refused, a disabled trigger).")
    var execute: String?

    func run() throws {
        let client = try bus.connect(as: "console-\(getpid())")
        defer { client.close() }
        if let execute {
            // Every command runs; the exit status says whether any failed.
            var failures = 0
            for line in execute.split(separator: ";") {
                guard line.utf8.count <= WireWriter.stringBytes else {
                    printError("stagebox: a console line holds at most \(WireWriter.stringBytes) bytes; "
                        + "'\(line.prefix(40))…' has \(line.utf8.count): not sent")
                    failures += 1
                    continue
                }
                let (text, failed) = try busRequest { () throws(BusClientError) in try client.consoleRun(String(line)) }
                print(text)
                if failed { failures += 1 }
            }
            if failures > 0 { throw ExitCode(1) }
            return
        }
        var editor = LineEditor(completions: { (try? client.consoleCompletions($0)) ?? [] })
        var saved = termios()
        let terminal = isatty(0) == 1 && tcgetattr(0, &saved) == 0
        if terminal {
            var raw = saved
            cfmakeraw(&raw)
            raw.c_oflag |= tcflag_t(OPOST | ONLCR)
            tcsetattr(0, TCSANOW, &raw)
        }
        defer { if terminal { tcsetattr(0, TCSANOW, &saved) } }
        out("Stagebox console on \(bus.socketPath). Type help; Ctrl-D leaves.\n" + editor.prompt)
        var byte: UInt8 = 0
        while read(0, &byte, 1) == 1 {
            if byte == 0x04 && editor.line.isEmpty { break } // Ctrl-D on an empty line
            let (echo, event) = editor.feed(byte)
            out(String(decoding: echo, as: UTF8.self))
            if case .discarded(let note)? = event { out("\r\n(\(note))\r\n" + editor.prompt + editor.line) }
            guard case .line(let line)? = event else {
                if event == .cancelled { out(editor.prompt) }
                continue
            }
            let words = line.split(separator: " ")
            if words == ["quit"] || words == ["exit"] { break }
            if words == ["meters"] {
                meters(client)
            } else {
                do {
                    let answer = try client.console(line)
                    if !answer.isEmpty { out(answer + "\n") }
                } catch {
                    out("stagebox: \(error)\n")
                    if case .connection = error { break }
                }
            }
            out(editor.prompt)
        }
        out("\n")
    }

    /// Live meters: asked for four times a second until a key is pressed.
    private func meters(_ client: BusClient) {
        var drawn = 0
        while true {
            guard let text = try? client.console("meters") else { return }
            let lines = text.split(separator: "\n")
            out((drawn > 0 ? "\u{1B}[\(drawn)A\r" : "") + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\n")
            drawn = lines.count
            var p = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 250) > 0 {
                var discard: UInt8 = 0
                _ = read(0, &discard, 1)
                return
            }
        }
    }

    private func out(_ text: String) {
        print(text, terminator: "")
        fflush(nil)
    }
}
