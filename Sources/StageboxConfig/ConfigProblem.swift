/// One thing wrong with a configuration file, with where it is.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    /// The key as written in the file, with its section: `audio.rate`, `connect[2].to`.
    public var key: String
    public var message: String
    /// What would be right, if there is a short list or range.
    public var allowed: String?

    public init(file: String, line: Int, key: String, message: String, allowed: String? = nil) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        self.allowed = allowed
    }

    /// `FILE:LINE: key: what is wrong (allowed: …)`
    public var description: String {
        "\(file):\(line): \(key): \(message)" + (allowed.map { " (allowed: \($0))" } ?? "")
    }
}

/// All the problems found in one file.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(_ problems: [ConfigProblem]) { self.problems = problems }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
