/// What a slate field (project, scene, tape, note) may hold: the take carries it in its bext
/// description and iXML chunk, and the console and `status` print it on a line of their own.
public enum SlateText {
    /// Project, scene and tape: a clapperboard's fields.
    public static let fieldBytes = 64
    /// The note for the next take.
    public static let noteBytes = 256

    /// Why `value` cannot be the slate field `field`, or nil when it can.
    public static func problem(_ value: String, field: String) -> String? {
        let limit = field == "note" ? noteBytes : fieldBytes
        if value.utf8.count > limit {
            return "\(field) is \(value.utf8.count) bytes long; at most \(limit)"
        }
        if let bad = value.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "\(field) holds a control character (U+\(String(bad.value, radix: 16, uppercase: true).leftPadded(4))); "
                + "a slate field is one line of text"
        }
        return nil
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
