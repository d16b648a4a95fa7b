import Testing
@testable import StageboxConsole

@Suite struct LineEditorTests {
    /// Types `text` byte by byte; returns everything echoed and the events.
    private func type(_ editor: inout LineEditor, _ text: String) -> (String, [LineEditor.Event]) {
        var echo: [UInt8] = []
        var events: [LineEditor.Event] = []
        for b in Array(text.utf8) {
            let (e, event) = editor.feed(b)
            echo += e
            if let event { events.append(event) }
        }
        return (String(decoding: echo, as: UTF8.self), events)
    }

    @Test func entersLinesWithEitherLineEnding() {
        var e = LineEditor()
        #expect(type(&e, "status\r").1 == [.line("status")])
        #expect(type(&e, "ports\r\n").1 == [.line("ports")], "CR LF is one line end")
        #expect(type(&e, "xruns\n").1 == [.line("xruns")])
        #expect(type(&e, "\r").1 == [.line("")])
    }

    @Test func backspaceAndCtrlUEdit() {
        var e = LineEditor()
        let (echo, _) = type(&e, "stax\u{7F}tus")
        #expect(e.line == "status")
        #expect(echo.contains("\u{8} \u{8}"))
        _ = type(&e, "\u{15}")
        #expect(e.line.isEmpty)
        #expect(type(&e, "\u{8}").0 == "\u{7}", "backspace on an empty line rings the bell")
        _ = type(&e, "é\u{7F}")
        #expect(e.line.isEmpty, "backspace removes a whole UTF-8 character")
    }

    @Test func ctrlCCancelsTheLine() {
        var e = LineEditor()
        #expect(type(&e, "conn\u{3}").1 == [.cancelled])
        #expect(e.line.isEmpty)
    }

    @Test func ctrlDEndsInputOnlyAtAnEmptyLine() {
        var e = LineEditor()
        #expect(type(&e, "\u{4}").1 == [.endOfInput])
        let typed = type(&e, "sta\u{4}")
        #expect(typed.1.isEmpty && typed.0.hasSuffix("\u{7}"), "Ctrl-D on a line rings the bell")
        #expect(e.line == "sta")
    }

    @Test func ctrlUDropsALineOfNoiseWhole() {
        var e = LineEditor(maximumLength: 8)
        _ = type(&e, "0123456789abcdef\u{1}")
        _ = type(&e, "\u{15}status\r")
        let last = type(&e, "ports\r").1
        #expect(last == [.line("ports")], "after Ctrl-U the next line runs")
    }

    @Test func upAndDownWalkTheHistory() {
        var e = LineEditor()
        _ = type(&e, "status\rports\r")
        _ = type(&e, "\u{1B}[A")
        #expect(e.line == "ports")
        _ = type(&e, "\u{1B}[A")
        #expect(e.line == "status")
        #expect(type(&e, "\u{1B}[A").0 == "\u{7}", "nothing older")
        _ = type(&e, "\u{1B}[B\u{1B}[B")
        #expect(e.line.isEmpty, "down past the newest gives an empty line")
        _ = type(&e, "\u{1B}OA") // the application-mode arrow some terminals send
        #expect(e.line == "ports")
    }

    @Test func tabCompletes() {
        let words = ["status", "stats-reset", "ports", "connect"]
        var e = LineEditor { line in
            let word = line.split(separator: " ", omittingEmptySubsequences: false).last.map(String.init) ?? ""
            return words.filter { $0.hasPrefix(word) }
        }
        _ = type(&e, "po\t")
        #expect(e.line == "ports ")
        _ = type(&e, "\u{15}stat\t")
        #expect(e.line == "stat", "several candidates and nothing more in common: listed")
        _ = type(&e, "u\t")
        #expect(e.line == "status ")
        _ = type(&e, "\u{15}zz")
        #expect(type(&e, "\t").0 == "\u{7}", "no candidate: the bell")
    }

    @Test func noiseIsDiscardedWithANoteNeverKept() {
        var e = LineEditor(maximumLength: 16)
        let (_, events) = type(&e, "\u{0}\u{1}\u{2}")
        #expect(events == [.discarded("NUL byte ignored"), .discarded("control byte 0x1 ignored"),
                           .discarded("control byte 0x2 ignored")])
        #expect(type(&e, "ok\r").1 == [.line("ok")], "a stray control byte never swallows the line after it")
        #expect(type(&e, "st\u{1}at\u{0}us\r").1 == [.discarded("control byte 0x1 ignored"), .discarded("NUL byte ignored"),
                                                     .line("status")], "nor the line it lands in")
        #expect(type(&e, "\u{1B}status\r").1 == [.line("status")], "a lone Escape drops only itself")
        // Bytes that are not UTF-8 (a mis-set baud rate) make the line be dropped too.
        _ = e.feed(0xFF)
        _ = e.feed(0xFE)
        #expect(e.feed(0x0D).event == .discarded("line with bytes that are not text ignored"))
        let long = type(&e, String(repeating: "x", count: 100) + "\r")
        #expect(long.1 == [.discarded("line longer than 16 characters ignored")])
        #expect(type(&e, "ok\r").1 == [.line("ok")], "the editor carries on")
        // A mis-set baud rate: random bytes, never a crash, and the next line still works.
        var x: UInt32 = 7
        for _ in 0..<65536 {
            x = x &* 1_664_525 &+ 1_013_904_223
            _ = e.feed(UInt8(truncatingIfNeeded: x >> 24))
        }
        _ = type(&e, "\u{3}")
        #expect(type(&e, "status\r").1 == [.line("status")])
    }
}
