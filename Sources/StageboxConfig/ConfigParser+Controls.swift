import StageboxPortRules
import TOMLKit
import StageboxTriggers

/// `[[button]]` and `[[led]]`: GPIO lines, and the triggers they fire or show.
extension ConfigParser {
    mutating func readButtons(_ value: TOMLValueConvertible) -> [(entry: ButtonEntry, ok: Bool)] {
        let allowed = ["name", "chip", "line", "active", "bias", "debounce_ms", "press", "release",
                       "long_press", "long_press_ms"]
        return readArray(value, section: "button", what: "a table with chip, line and press") { parser, t, i in
            var entry = ButtonEntry(name: "button \(i + 1)", sourceLine: parser.lines.line(section: "button", index: i),
                                    number: i + 1)
            var fields = Fields(parser: parser, table: t, section: "button", arrayIndex: i, allowedKeys: allowed)
            fields.string("name", &entry.name, nonEmpty: true)
            fields.string("chip", &entry.chip, nonEmpty: true)
            fields.int("line", &entry.line, range: gpioLineRange, required: true)
            fields.choice("active", &entry.active, among: ButtonEntry.levels)
            fields.choice("bias", &entry.bias, among: ButtonEntry.biases)
            fields.int("debounce_ms", &entry.debounceMs, range: ButtonEntry.debounceRange)
            fields.trigger("press", &entry.press, required: false)
            fields.trigger("release", &entry.release, required: false)
            fields.trigger("long_press", &entry.longPress, required: false)
            fields.int("long_press_ms", &entry.longPressMs, range: ButtonEntry.longPressRange)
            parser = fields.parser
            return entry
        }
    }

    mutating func readLEDs(_ value: TOMLValueConvertible) -> [(entry: LEDEntry, ok: Bool)] {
        readArray(value, section: "led", what: "a table with chip, line and trigger") { parser, t, i in
            var entry = LEDEntry(trigger: "", sourceLine: parser.lines.line(section: "led", index: i), number: i + 1)
            var fields = Fields(parser: parser, table: t, section: "led", arrayIndex: i,
                                allowedKeys: ["chip", "line", "active", "trigger"])
            fields.string("chip", &entry.chip, nonEmpty: true)
            fields.int("line", &entry.line, range: gpioLineRange, required: true)
            fields.choice("active", &entry.active, among: ButtonEntry.levels)
            fields.trigger("trigger", &entry.trigger, required: true, fired: false)
            parser = fields.parser
            return entry
        }
    }

    /// Reads each table of the array `[[section]]` with `read`; each entry says whether it has
    /// a problem (it is then left out, as a connection is, after the check for shared lines).
    mutating func readArray<Entry>(_ value: TOMLValueConvertible, section: String, what: String,
                                           _ read: (inout ConfigParser, TOMLTable, Int) -> Entry) -> [(entry: Entry, ok: Bool)] {
        guard let array = value.array else {
            problems.append(.init(file: file, line: lines.line(section: section), key: section,
                                  message: "must be an array of tables, written [[\(section)]]"))
            return []
        }
        var entries: [(entry: Entry, ok: Bool)] = []
        for (i, element) in array.enumerated() {
            guard let t = element.table else {
                problems.append(.init(file: file, line: lines.line(section: section, index: i),
                                      key: "\(section)[\(i + 1)]", message: "must be \(what)"))
                continue
            }
            let before = problems.count
            let entry = read(&self, t, i)
            entries.append((entry, problems.count == before))
        }
        return entries
    }

    /// Two buttons on one line, a button's line driven as an LED, or two LEDs on one line:
    /// the later entry is a problem at its `line` key. Entries with problems elsewhere count
    /// too (unless their chip or line is the problem); returns the entries free of problems.
    ///
    /// Chips are compared as written, after the spellings that name the same chip without
    /// asking the kernel (`gpiochip0`, `/dev/gpiochip0`, `0`); a chip given by its label
    /// (`pinctrl-bcm2711`) is only known at boot, so a clash through a label is not found
    /// here: the second request then fails at boot with "Device or resource busy", logged.
    mutating func checkSharedLines(buttons: [(entry: ButtonEntry, ok: Bool)], leds: [(entry: LEDEntry, ok: Bool)])
        -> ([ButtonEntry], [LEDEntry]) {
        var taken: [String: String] = [:]
        /// Whether `section[number]` (chip, line) is free; takes it for `owner` if so.
        func take(_ section: String, _ number: Int, _ chip: String, _ line: Int, owner: String) -> Bool {
            let prefix = "\(section)[\(number)]."
            if problems.contains(where: { $0.key == prefix + "chip" || $0.key == prefix + "line" }) { return true }
            let key = "\(Self.chipKey(chip)) line \(line)"
            if let first = taken[key] {
                sharedLineProblem(section: section, number: number, what: "\(chip) line \(line)", first: first)
                return false
            }
            taken[key] = owner
            return true
        }
        let goodButtons = buttons.filter { b in
            take("button", b.entry.number, b.entry.chip, b.entry.line,
                 owner: "button[\(b.entry.number)] '\(b.entry.name)' (line \(b.entry.sourceLine))") && b.ok
        }
        let goodLEDs = leds.filter { l in
            take("led", l.entry.number, l.entry.chip, l.entry.line, owner: "led[\(l.entry.number)] (line \(l.entry.sourceLine))") && l.ok
        }
        return (goodButtons.map(\.entry), goodLEDs.map(\.entry))
    }

    private mutating func sharedLineProblem(section: String, number: Int, what: String, first: String) {
        problems.append(.init(file: file, line: lines.line(section: section, index: number - 1, key: "line"),
                              key: "\(section)[\(number)].line", message: "\(what) is already used by \(first)",
                              allowed: "one button or LED per line"))
    }

    /// `gpiochip3`, `/dev/gpiochip3` and `3` as one chip; anything else (a label, another
    /// path) as written.
    static func chipKey(_ chip: String) -> String {
        let name = chip.hasPrefix("/dev/") ? String(chip.dropFirst(5)) : chip
        if !name.isEmpty, name.allSatisfy(\.isASCIIDigitCharacter) { return "gpiochip" + name }
        return name
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

extension ConfigParser.Fields {
    /// A trigger's name: a built-in one or `client.trigger` (TriggerRules); empty means none,
    /// unless `required`. `fired`: a name to fire (a button's), not only to show (an LED's).
    mutating func trigger(_ key: String, _ target: inout String, required: Bool, fired: Bool = true) {
        string(key, &target, nonEmpty: required, required: required)
        guard !target.isEmpty else { return }
        do throws(TriggerRuleViolation) {
            try TriggerRules.checkReference(target, fired: fired)
        } catch {
            problem(key, error.description)
            target = ""
        }
    }
}
