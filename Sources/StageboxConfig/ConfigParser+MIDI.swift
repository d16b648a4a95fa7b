import TOMLKit

/// `[midi]` and `[[midi.map]]`: which MIDI peers are connected, and the notes and controllers
/// that fire triggers.
extension ConfigParser {
    mutating func readMIDI(_ t: TOMLTable) -> MIDISection {
        var midi = MIDISection()
        var fields = Fields(parser: self, table: t, section: "midi", allowedKeys: ["connect", "map"])
        if let value = t["connect"] {
            let allowed = "\"all\" | \"none\" | [\"nanoKONTROL2\", …]"
            if let connect = Self.connectSetting(value) {
                midi.connect = connect
            } else if let s = value.string {
                fields.problem("connect", "'\(s)' is not a known value", allowed: allowed)
            } else if value.array != nil {
                fields.problem("connect", "every client name must be a string that is not empty", allowed: allowed)
            } else {
                fields.problem("connect", "must be \"all\", \"none\" or an array of client names, not \(value.type)",
                               allowed: allowed)
            }
        }
        problems = fields.parser.problems
        if let map = t["map"] {
            midi.maps = readMIDIMaps(map).filter(\.ok).map(\.entry)
        }
        return midi
    }

    private static func connectSetting(_ value: TOMLValueConvertible) -> MIDIConnectSetting? {
        if let s = value.string {
            switch s {
            case "all": return .all
            case "none": return MIDIConnectSetting.none
            default: return nil
            }
        }
        guard let array = value.array else { return nil }
        let names = array.compactMap(\.string)
        guard names.count == array.count, !names.contains(where: \.isEmpty) else { return nil }
        return .clients(names)
    }

    private mutating func readMIDIMaps(_ value: TOMLValueConvertible) -> [(entry: MIDIMapEntry, ok: Bool)] {
        let allowed = ["note", "cc", "channel", "press", "release", "long_press", "long_press_ms"]
        let section = "midi.map"
        return readArray(value, section: section, what: "a table with note or cc and press") { parser, t, i in
            var entry = MIDIMapEntry(sourceLine: parser.lines.line(section: section, index: i), number: i + 1)
            var fields = Fields(parser: parser, table: t, section: section, arrayIndex: i, allowedKeys: allowed)
            var number = -1
            switch (t["note"] != nil, t["cc"] != nil) {
            case (true, true): fields.problem("cc", "give note or cc, not both")
            case (false, false): fields.problem("note", "missing: give note or cc")
            case (true, false):
                fields.int("note", &number, range: MIDIMapEntry.valueRange)
                if number >= 0 { entry.note = number }
            case (false, true):
                fields.int("cc", &number, range: MIDIMapEntry.valueRange)
                if number >= 0 { entry.cc = number }
            }
            entry.channel = fields.midiChannel()
            let before = fields.parser.problems.count
            fields.trigger("press", &entry.press, required: false)
            fields.trigger("release", &entry.release, required: false)
            fields.trigger("long_press", &entry.longPress, required: false)
            if fields.parser.problems.count == before && entry.press.isEmpty && entry.release.isEmpty && entry.longPress.isEmpty {
                fields.problem("press", "missing: give press, release or long_press")
            }
            fields.int("long_press_ms", &entry.longPressMs, range: ButtonEntry.longPressRange)
            parser = fields.parser
            return entry
        }
    }
}

extension ConfigParser.Fields {
    /// `channel`: 1–16, or "any" (also when absent).
    mutating func midiChannel() -> Int? {
        guard let v = table["channel"] else { return nil }
        let allowed = "1–16 or \"any\""
        if let s = v.string {
            if s != "any" { problem("channel", "'\(s)' is not a channel", allowed: allowed) }
            return nil
        }
        guard v.type == .int, let n = v.int else {
            problem("channel", "must be an integer or \"any\", not \(v.type)", allowed: allowed)
            return nil
        }
        guard MIDIMapEntry.channelRange.contains(n) else {
            problem("channel", "\(n) is out of range", allowed: allowed)
            return nil
        }
        return n
    }
}
