/// Takes out of a text what must never leave the box in a support bundle: values of keys
/// named like secrets (`psk=…`, `password: …`, `wpa_passphrase=…`, `token=…`, `secret`, `key`)
/// and whole PEM blocks (`-----BEGIN … PRIVATE KEY-----`). What is taken out is replaced by
/// `<removed>`, so a reader sees that something was there.
public enum SecretScrubber {
    /// Words that, as a key or a part of one (`wpa_psk`, `api_token`, `private_key`), make the
    /// value after it a secret (lower case); all but `key` also at a key's end (`authtoken`).
    static let secretWords = ["psk", "password", "passwd", "passphrase", "secret", "token", "key"]

    static func isSecretKey(_ key: String) -> Bool {
        let lower = key.lowercased()
        let parts = lower.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == "." }).map(String.init)
        return parts.contains { secretWords.contains($0) } || secretWords.dropLast().contains { lower.hasSuffix($0) }
    }

    public static func scrub(_ lines: [String]) -> [String] {
        var out: [String] = []
        var inPEM = false
        for line in lines {
            if line.contains("-----BEGIN ") && line.contains("PRIVATE KEY") {
                inPEM = true
                out.append("<removed: a private key>")
                continue
            }
            if inPEM {
                if line.contains("-----END ") { inPEM = false }
                continue
            }
            out.append(scrubLine(line))
        }
        return out
    }

    /// One line: after each key that names a secret and its `=` or `:`, the value (up
    /// to the next blank, comma or semicolon, or the closing quote) is replaced.
    static func scrubLine(_ line: String) -> String {
        let chars = Array(line)
        var result = ""
        var i = 0
        while i < chars.count {
            // A key: letters, digits, `_`, `-`, `.`.
            guard isKeyChar(chars[i]) else {
                result.append(chars[i])
                i += 1
                continue
            }
            var j = i
            while j < chars.count, isKeyChar(chars[j]) { j += 1 }
            let key = String(chars[i..<j])
            result += key
            i = j
            guard isSecretKey(key) else { continue }
            // The separator: blanks, `=` or `:`, blanks; a quote opens a quoted value.
            var k = i
            while k < chars.count, chars[k] == " " || chars[k] == "\t" { k += 1 }
            var hadSign = false
            if k < chars.count, chars[k] == "=" || chars[k] == ":" {
                hadSign = true
                k += 1
                while k < chars.count, chars[k] == " " || chars[k] == "\t" { k += 1 }
            }
            // Without `=` or `:` it is prose ("key frames"), not a setting.
            guard k < chars.count, hadSign else { continue }
            result += String(chars[i..<k])
            var end = k
            if chars[k] == "\"" || chars[k] == "'" {
                let quote = chars[k]
                end = k + 1
                while end < chars.count, chars[end] != quote { end += 1 }
                result += "\(quote)<removed>"
                i = min(end, chars.count)
                continue
            }
            while end < chars.count, !" \t,;".contains(chars[end]) { end += 1 }
            result += "<removed>"
            i = end
        }
        return result
    }

    private static func isKeyChar(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || c == "_" || c == "-" || c == "."
    }
}
