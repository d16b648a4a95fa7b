/// What a slate field (project, scene, tape, note) may hold: the take carries it in its bext
/// description and iXML chunk, and the console and `status` print it on a line of their own.
public enum SlateText {
    /// Project, scene and tape: a clapperboard's fields.
    public static let fieldBytes = 64
    /// The note for the next take: with `note ` it fits the serial console's 256-byte line.
    public static let noteBytes = 240

    /// Why `value` cannot be the slate field `field` ("is 65 bytes long (at most 64)"), or nil
    /// when it can; the caller names the field.
    public static func problem(_ value: String, field: String) -> String? {
        let limit = field == "note" ? noteBytes : fieldBytes
        if value.utf8.count > limit {
            return "is \(value.utf8.count) bytes long (at most \(limit))"
        }
        if let bad = value.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            return "holds a control character (U+\(String(bad.value, radix: 16, uppercase: true).leftPadded(4))): "
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
