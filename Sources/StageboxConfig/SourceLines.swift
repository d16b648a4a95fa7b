/// Finds the line of a key in a TOML text, since the parser does not keep positions.
///
/// Good enough for the files people write by hand: one `key = value` per line,
/// `[section]` and `[[array]]` headers on their own lines.
struct SourceLines {
    private struct Entry {
        var section: String
        /// Which `[[section]]` this is (0-based), or 0 for a plain table.
        var index: Int
        var key: String?
        var line: Int
    }

    private var entries: [Entry] = []

    init(_ text: String) {
        var section = ""
        var arrayCounts: [String: Int] = [:]
        var index = 0
        // By scalars: a Windows line end, "\r\n", is one Character, which a split on "\n" misses.
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { Substring($0) }
        for (n, raw) in lines.enumerated() {
            // A byte-order mark, as a Windows editor may start the file with, is not part of the line.
            let line = raw.drop { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" || $0 == "\r" }
            if line.hasPrefix("[[") {
                section = Self.name(in: line.dropFirst(2), until: "]")
                index = arrayCounts[section, default: 0]
                arrayCounts[section] = index + 1
                entries.append(Entry(section: section, index: index, key: nil, line: n + 1))
            } else if line.hasPrefix("[") {
                section = Self.name(in: line.dropFirst(), until: "]")
                index = 0
                entries.append(Entry(section: section, index: 0, key: nil, line: n + 1))
            } else if let eq = line.firstIndex(of: "="), !line.hasPrefix("#") {
                let key = Self.name(in: line[..<eq], until: "=")
                entries.append(Entry(section: section, index: index, key: key, line: n + 1))
            }
        }
    }

    private static func name(in text: Substring, until end: Character) -> String {
        let upTo = text.prefix { $0 != end }
        return upTo.trimmingCharacters(in: " \t\"'")
    }

    /// The line of `key` in `section` (the `index`-th of an array of tables), or of the
    /// section's header when the key is not found, or 1.
    func line(section: String, index: Int = 0, key: String? = nil) -> Int {
        if let key, let e = entries.first(where: { $0.section == section && $0.index == index && $0.key == key }) {
            return e.line
        }
        if let e = entries.first(where: { $0.section == section && $0.index == index && $0.key == nil }) {
            return e.line
        }
        if section.isEmpty, let key, let e = entries.first(where: { $0.key == key }) { return e.line }
        return 1
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
