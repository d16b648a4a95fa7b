import DequeModule

/// A line editor a dumb terminal can drive: printable text, backspace, Ctrl-U, Ctrl-C, up/down
/// history, Tab completion. It takes bytes and answers with the bytes to echo, so that it works
/// the same over a serial port and a pty, and never blocks on either.
public struct LineEditor: Sendable {
    public enum Event: Equatable, Sendable {
        /// A whole line was entered.
        case line(String)
        /// Ctrl-C: the line was dropped.
        case cancelled
        /// Ctrl-D at an empty line: the end of input.
        case endOfInput
        /// Input that is not text was thrown away; the note says what.
        case discarded(String)
    }

    /// The longest line kept; longer input is discarded with a note.
    public let maximumLength: Int
    public let prompt: String
    /// Completes the word before the cursor: all candidates that start with it.
    public var completions: @Sendable (_ line: String) -> [String]

    public private(set) var buffer: [UInt8] = []
    private var history: Deque<String> = []
    private var historyIndex: Int?
    private var escape: [UInt8] = []
    private var overflowed = false
    private var lastWasCR = false

    public init(prompt: String = "stagebox> ", maximumLength: Int = 256,
                completions: @escaping @Sendable (String) -> [String] = { _ in [] }) {
        self.prompt = prompt
        self.maximumLength = maximumLength
        self.completions = completions
    }

    public var line: String { String(decoding: buffer, as: UTF8.self) }

    /// Feeds one byte; returns what to echo and, when something happened, the event.
    public mutating func feed(_ byte: UInt8) -> (echo: [UInt8], event: Event?) {
        if !escape.isEmpty || byte == 0x1B { return handleEscape(byte) }
        defer { lastWasCR = byte == 0x0D }
        switch byte {
        case 0x0D, 0x0A:
            if byte == 0x0A && lastWasCR { return ([], nil) } // CR LF is one end of line
            let text = line
            let bufferBeforeDecoding = buffer
            buffer = []
            historyIndex = nil
            if overflowed {
                overflowed = false
                return (Array("\r\n".utf8), .discarded("line longer than \(maximumLength) characters ignored"))
            }
            // Bytes that are not text (noise): the line is dropped at its end, never run.
            if String(validating: bufferBeforeDecoding, as: UTF8.self) == nil {
                return (Array("\r\n".utf8), .discarded("line with bytes that are not text ignored"))
            }
            if !text.isEmpty && history.last != text {
                history.append(text)
                if history.count > 64 { history.removeFirst() } // Deque: O(1)
            }
            return (Array("\r\n".utf8), .line(text))
        case 0x03: // Ctrl-C
            buffer = []
            overflowed = false
            historyIndex = nil
            return (Array("^C\r\n".utf8), .cancelled)
        case 0x04: // Ctrl-D: the end of input at an empty line, else nothing
            return buffer.isEmpty && !overflowed ? (Array("\r\n".utf8), .endOfInput) : ([0x07], nil)
        case 0x15: // Ctrl-U: the whole line goes, noise and all
            overflowed = false
            return (replace(with: []), nil)
        case 0x08, 0x7F: // backspace, delete
            guard !buffer.isEmpty else { return ([0x07], nil) }
            // Remove a whole UTF-8 character.
            var removed = buffer.removeLast()
            while removed & 0xC0 == 0x80, !buffer.isEmpty { removed = buffer.removeLast() }
            return (Array("\u{8} \u{8}".utf8), nil)
        case 0x09:
            return (complete(), nil)
        case 0x20...0x7E, 0x80...0xFF:
            guard buffer.count < maximumLength else {
                overflowed = true
                return ([], nil)
            }
            buffer.append(byte)
            return ([byte], nil)
        // A stray control byte (a key pressed by mistake) is ignored alone: the line goes on,
        // and it runs as typed. Noise from a mis-set baud rate is bytes that are not UTF-8,
        // which drop the whole line at its end.
        case 0x00:
            return ([0x07], .discarded("NUL byte ignored"))
        default:
            return ([0x07], .discarded("control byte 0x\(String(byte, radix: 16)) ignored"))
        }
    }

    /// Up, down, and anything else a terminal sends after ESC (ignored). A lone ESC followed
    /// by text (Escape pressed by mistake) drops only the ESC: the text is typed as usual.
    private mutating func handleEscape(_ byte: UInt8) -> (echo: [UInt8], event: Event?) {
        escape.append(byte)
        if escape.count == 1 { return ([], nil) }
        if escape.count == 2 && escape[1] != 0x5B && escape[1] != 0x4F {
            escape = []
            return feed(byte)
        }
        if escape.count == 2 { return ([], nil) }
        guard (0x40...0x7E).contains(byte) else {
            return escape.count > 8 ? reset() : ([], nil)
        }
        escape = []
        switch byte {
        case 0x41: return (recall(older: true), nil)  // up
        case 0x42: return (recall(older: false), nil) // down
        default: return ([], nil)
        }
    }

    private mutating func reset() -> (echo: [UInt8], event: Event?) {
        escape = []
        return ([], nil)
    }

    private mutating func recall(older: Bool) -> [UInt8] {
        guard !history.isEmpty else { return [0x07] }
        var index = historyIndex ?? history.count
        index += older ? -1 : 1
        if index < 0 { return [0x07] }
        if index >= history.count {
            historyIndex = nil
            return replace(with: [])
        }
        historyIndex = index
        return replace(with: Array(history[index].utf8))
    }

    /// Erases the shown line and shows `bytes` instead.
    private mutating func replace(with bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<line.count { out += Array("\u{8} \u{8}".utf8) }
        buffer = bytes
        return out + bytes
    }

    /// Tab: one candidate completes the word; several complete their common prefix and are listed.
    private mutating func complete() -> [UInt8] {
        let text = line
        let candidates = completions(text)
        guard !candidates.isEmpty else { return [0x07] }
        let word = text.split(separator: " ", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        var common = candidates[0]
        for c in candidates.dropFirst() {
            common = String(zip(common, c).prefix { $0 == $1 }.map(\.0))
        }
        let addition = String(common.dropFirst(word.count)) + (candidates.count == 1 ? " " : "")
        if candidates.count == 1 || !addition.isEmpty {
            let bytes = Array(addition.utf8)
            guard buffer.count + bytes.count <= maximumLength else { return [0x07] }
            buffer += bytes
            return bytes
        }
        // Several, and nothing more in common: list them, then show the line again.
        return Array(("\r\n" + candidates.joined(separator: "  ") + "\r\n" + prompt + text).utf8)
    }
}
