import ArgumentParser
import StageboxConfig

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a stagebox.toml: print every problem and exit 1, or print nothing and exit 0.")

    @Argument(help: "The configuration file to check.")
    var file: String

    func run() throws {
        let problems = Self.problems(in: file)
        for p in problems { print(p) }
        if !problems.isEmpty { throw ExitCode(1) }
    }

    /// Every problem of `file`: syntax, keys, types, ranges, and connections that cannot be made.
    static func problems(in file: String) -> [ConfigProblem] {
        do {
            let config = try ConfigLoader.load(path: file)
            return EngineBuilder.make(config, file: file).1
        } catch {
            return error.problems
        }
    }
}
