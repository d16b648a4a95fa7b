/// One thing wrong with a configuration file, with where it is.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// nil for a problem of the whole file (it cannot be read, it is not UTF-8 text).
    public var line: Int?
    /// The key as written in the file, with its section: `audio.rate`, `connect[2].to`; empty
    /// for a problem of the whole file.
    public var key: String
    public var message: String
    /// What would be right, if there is a short list or range.
    public var allowed: String?

    public init(file: String, line: Int?, key: String, message: String, allowed: String? = nil) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        self.allowed = allowed
    }

    /// `FILE:LINE: key: what is wrong (allowed: …)`, or `FILE: what is wrong` for the whole file.
    public var description: String {
        file + (line.map { ":\($0)" } ?? "") + ": " + (key.isEmpty ? "" : "\(key): ") + message
            + (allowed.map { " (allowed: \($0))" } ?? "")
    }

    /// `problems` in the order of their lines, the whole file's first; problems on one line keep
    /// their order.
    public static func inLineOrder(_ problems: [ConfigProblem]) -> [ConfigProblem] {
        problems.enumerated()
            .sorted { a, b in (a.element.line ?? 0, a.offset) < (b.element.line ?? 0, b.offset) }
            .map(\.element)
    }
}

/// All the problems found in one file.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(_ problems: [ConfigProblem]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// A file read as far as it goes (`ConfigLoader.read`): what a checker needs to report every
/// problem in one run.
public struct ConfigReading: Sendable {
    /// Each value with a problem at its default; nil when the file cannot be read or is not TOML.
    public var config: StageboxConfiguration?
    /// In line order.
    public var problems: [ConfigProblem]

    public init(config: StageboxConfiguration?, problems: [ConfigProblem]) {
        self.config = config
        self.problems = problems
    }

    /// Whether `key` (`audio.inputs`) has a problem, so that its value is only the default.
    public func hasProblem(at key: String) -> Bool { problems.contains { $0.key == key } }
}
