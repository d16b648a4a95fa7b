/// A support bundle: one plain-text file a person can open on any computer and send to whoever
/// helps them: sections with a title each, every line scrubbed of secrets, the whole under a
/// size limit (the longest sections are cut from their start, keeping their latest lines).
public struct SupportBundle: Sendable {
    public struct Section: Sendable {
        public var title: String
        public var lines: [String]

        public init(_ title: String, _ lines: [String]) {
            self.title = title
            self.lines = lines
        }
    }

    public var sections: [Section] = []
    /// The bundle's size at most, in bytes (1 MB: small enough for any mail).
    public var limit = 1_000_000
    /// A line longer than this is cut (a runaway log line must not crowd out the rest).
    public static let lineLimit = 400

    public init() {}

    public mutating func add(_ title: String, _ lines: [String]) {
        sections.append(Section(title, lines))
    }

    /// The file's text: each section under its `== title ==` line, secrets removed, cut to
    /// `limit` bytes by dropping the oldest lines of the largest sections first.
    public func text() -> String {
        var scrubbed = sections.map { s in
            Section(s.title, SecretScrubber.scrub(s.lines).map { $0.utf8.count > Self.lineLimit ? String($0.prefix(Self.lineLimit)) + " …" : $0 })
        }
        // Lines cut from each section's start; the note saying so is added when writing.
        var cut = [Int](repeating: 0, count: scrubbed.count)
        func total() -> Int {
            zip(scrubbed, cut).reduce(0) { $0 + Self.size(of: $1.0) + ($1.1 > 0 ? Self.note($1.1).utf8.count + 1 : 0) }
        }
        while total() > limit, let largest = scrubbed.indices.max(by: { scrubbed[$0].lines.count < scrubbed[$1].lines.count }),
              scrubbed[largest].lines.count > 1 {
            // A tenth of the largest section's oldest lines at a time.
            let drop = max(1, scrubbed[largest].lines.count / 10)
            scrubbed[largest].lines.removeFirst(drop)
            cut[largest] += drop
        }
        return zip(scrubbed, cut).map { s, n in
            (["== \(s.title) =="] + (n > 0 ? [Self.note(n)] : []) + s.lines).joined(separator: "\n")
        }.joined(separator: "\n\n") + "\n"
    }

    private static func note(_ cut: Int) -> String { "(\(cut) older lines cut to stay under the size limit)" }

    private static func size(of section: Section) -> Int {
        section.title.utf8.count + 8 + section.lines.reduce(0) { $0 + $1.utf8.count + 1 } + 2
    }
}
