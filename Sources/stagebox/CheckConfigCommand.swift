import StageboxAppliance
import ArgumentParser
import StageboxConfig
import StageboxEngine

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

    /// Every problem of `file` in line order: syntax, keys, types, ranges, and connections that
    /// cannot be made. A problem in one place hides none elsewhere: connections are checked
    /// whatever else is wrong, except against a channel count whose own key is wrong.
    static func problems(in file: String) -> [ConfigProblem] {
        let reading = ConfigLoader.read(path: file)
        guard let config = reading.config else { return reading.problems }
        var uncertain: Set<String> = []
        if reading.hasProblem(at: "audio.inputs") { uncertain.insert(BuiltinPort.codecIn) }
        if reading.hasProblem(at: "audio.outputs") { uncertain.insert(BuiltinPort.codecOut) }
        let connections = EngineBuilder.make(config, file: file, uncertainPorts: uncertain).1
        return ConfigProblem.inLineOrder(reading.problems + connections)
    }
}
