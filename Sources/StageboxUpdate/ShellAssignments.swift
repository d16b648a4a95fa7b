/// The `NAME='value'` lines of `rauc status --output-format=shell` and `rauc info
/// --output-format=shell`: RAUC quotes every value with GLib's g_shell_quote, which wraps it in
/// single quotes and writes a quote inside as '\''. Lines that are not assignments are skipped.
enum ShellAssignments {
    static func parse(_ lines: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for line in lines {
            guard let equals = line.firstIndex(of: "="), line.first.map({ $0.isLetter || $0 == "_" }) == true else { continue }
            let name = String(line[..<equals])
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { continue }
            values[name] = unquote(line[line.index(after: equals)...])
        }
        return values
    }

    /// 'a'\''b' → a'b; an unquoted word stays as it is.
    static func unquote(_ text: Substring) -> String {
        var out = ""
        var quoted = false
        var index = text.startIndex
        while index < text.endIndex {
            let c = text[index]
            if c == "'" {
                quoted.toggle()
            } else if c == "\\" && !quoted, text.index(after: index) < text.endIndex {
                index = text.index(after: index)
                out.append(text[index])
            } else {
                out.append(c)
            }
            index = text.index(after: index)
        }
        return out
    }
}
