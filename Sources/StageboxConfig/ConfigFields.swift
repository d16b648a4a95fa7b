import StageboxPortRules
import TOMLKit

extension ConfigParser {
    /// Reads typed, range-checked fields of one table.
    struct Fields {
        var parser: ConfigParser
        let table: TOMLTable
        let section: String
        /// Which `[[section]]` this is (0-based); 0 for a plain `[section]`.
        let index: Int
        let isArray: Bool
        let allowedKeys: [String]

        /// `arrayIndex`: the table's place in an array of tables (`[[connect]]`), nil for `[section]`.
        init(parser: ConfigParser, table: TOMLTable, section: String, arrayIndex: Int? = nil, allowedKeys: [String]) {
            self.parser = parser
            self.table = table
            self.section = section
            self.index = arrayIndex ?? 0
            isArray = arrayIndex != nil
            self.allowedKeys = allowedKeys
            for key in table.keys where !allowedKeys.contains(key) {
                problem(key, "unknown key", allowed: allowedKeys.joined(separator: ", "))
            }
        }

        private var keyPrefix: String { isArray ? "\(section)[\(index + 1)]" : section }

        mutating func problem(_ key: String, _ message: String, allowed: String? = nil) {
            let line = parser.lines.line(section: section, index: index, key: key)
            parser.problems.append(.init(file: parser.file, line: line, key: "\(keyPrefix).\(key)",
                                         message: message, allowed: allowed))
        }

        private mutating func value(_ key: String, required: Bool) -> TOMLValueConvertible? {
            guard let v = table[key] else {
                if required { problem(key, "missing") }
                return nil
            }
            return v
        }

        mutating func string(_ key: String, _ target: inout String, nonEmpty: Bool, required: Bool = false) {
            guard let v = value(key, required: required) else { return }
            guard let s = v.string else { return problem(key, "must be a string, not \(v.type)") }
            if nonEmpty && s.isEmpty { return problem(key, "must not be empty") }
            target = s
        }

        /// Checks `text` (read from `key`) as `PORT` or `PORT:CHANNEL` under the port rules; an
        /// empty text has had its problem already.
        mutating func endpoint(_ key: String, _ text: String) {
            guard !text.isEmpty else { return }
            do throws(PortRuleViolation) {
                try PortRules.checkPortName(try PortEndpoint(parsing: text).port)
            } catch {
                problem(key, error.description)
            }
        }

        /// Checks a port name (no channel) read from `key`; false with a problem when it breaks the rules.
        @discardableResult
        mutating func endpointPort(_ key: String, _ text: String) -> Bool {
            guard !text.isEmpty else { return false }
            do throws(PortRuleViolation) {
                try PortRules.checkPortName(text)
                return true
            } catch {
                problem(key, error.description)
                return false
            }
        }

        /// A source a take can record: a built-in sender (`codec.in`, `tone`) or a client's
        /// `CLIENT.PORT` (which may come later); never a receiver or another built-in name.
        mutating func recordable(_ key: String, _ name: String) -> Bool {
            let builtinSenders = ["codec.in", "tone"]
            if builtinSenders.contains(name) { return true }
            if name == "codec.out" {
                problem(key, "codec.out is a receiver: a take records senders and filters", allowed: "codec.in, tone or a client's CLIENT.PORT")
                return false
            }
            let owner = String(name.prefix { $0 != "." })
            // A Character search: this file sees Foundation (through TOMLKit), whose
            // String.contains(String) would link ICU into the static binary.
            if PortRules.reservedNames.contains(owner) || name.firstIndex(of: ".") == nil {
                problem(key, "no port named \(name) can be on the bus", allowed: "codec.in, tone or a client's CLIENT.PORT")
                return false
            }
            return true
        }

        mutating func choice(_ key: String, _ target: inout String, among choices: [String]) {
            guard let v = value(key, required: false) else { return }
            let list = choices.joined(separator: " | ")
            guard let s = v.string else { return problem(key, "must be a string, not \(v.type)", allowed: list) }
            guard choices.contains(s) else { return problem(key, "'\(s)' is not a known value", allowed: list) }
            target = s
        }

        mutating func int(_ key: String, _ target: inout Int, range: ClosedRange<Int>, required: Bool = false) {
            guard let v = value(key, required: required) else { return }
            let bounds = "\(range.lowerBound)–\(range.upperBound)"
            guard v.type == .int, let n = v.int else {
                return problem(key, "must be an integer, not \(v.type)", allowed: bounds)
            }
            guard range.contains(n) else { return problem(key, "\(n) is out of range", allowed: bounds) }
            target = n
        }

        mutating func bool(_ key: String, _ target: inout Bool) {
            guard let v = value(key, required: false) else { return }
            guard let b = v.bool else { return problem(key, "must be true or false, not \(v.type)", allowed: "true, false") }
            target = b
        }

        mutating func double(_ key: String, _ target: inout Double, range: ClosedRange<Double>) {
            guard let v = value(key, required: false) else { return }
            let bounds = "\(Self.short(range.lowerBound))–\(Self.short(range.upperBound))"
            let number: Double?
            switch v.type {
            case .double: number = v.double
            case .int: number = v.int.map(Double.init)
            default: number = nil
            }
            guard let x = number else { return problem(key, "must be a number, not \(v.type)", allowed: bounds) }
            guard range.contains(x) else { return problem(key, "\(Self.short(x)) is out of range", allowed: bounds) }
            target = x
        }

        private static func short(_ x: Double) -> String {
            x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
        }
    }
}
