/// A system version as the card's build writes it (`0.1.0-20261126.073000`, `1.2.0`): runs of
/// digits compare as numbers, other runs as text, in order; a version that is a prefix of
/// another is the lower one. So 0.1.0-20261126.073000 < 0.1.0-20261127.080000 < 0.2.0.
public struct SystemVersion: Comparable, Sendable, CustomStringConvertible {
    public let text: String
    private let parts: [Part]

    private enum Part: Comparable {
        case number(UInt64)
        case word(String)
    }

    public init(_ text: String) {
        self.text = text
        var parts: [Part] = []
        var run = ""
        var digits = false
        func flush() {
            guard !run.isEmpty else { return }
            parts.append(digits ? .number(UInt64(run.drop { $0 == "0" }.prefix(18)) ?? 0) : .word(run))
            run = ""
        }
        for c in text {
            if c.isASCII && c.isNumber {
                if !digits { flush() }
                digits = true
                run.append(c)
            } else if c.isLetter {
                if digits { flush() }
                digits = false
                run.append(c)
            } else {
                flush() // separators only separate
            }
        }
        flush()
        self.parts = parts
    }

    public var description: String { text }

    public static func < (a: SystemVersion, b: SystemVersion) -> Bool { a.parts.lexicographicallyPrecedes(b.parts) }
    public static func == (a: SystemVersion, b: SystemVersion) -> Bool { a.parts == b.parts }
}
