import StageboxEngine
import StageboxConfig

/// Builds the engine a configuration describes and makes its connections.
enum EngineBuilder {
    static func settings(for config: StageboxConfiguration) -> EngineSettings {
        EngineSettings(sampleRate: config.audio.rate, maxFrames: config.audio.period,
                       inputs: config.audio.inputs, outputs: config.audio.outputs,
                       toneSignal: ToneSignal(rawValue: config.tone.signal) ?? .sine,
                       toneFrequency: config.tone.frequency, toneLevelDB: config.tone.levelDB)
    }

    /// The engine with every `[[connect]]` that can be made; the ones that cannot are returned
    /// as problems that name their file and line.
    static func make(_ config: StageboxConfiguration, file: String) -> (Engine, [ConfigProblem]) {
        let engine = Engine(settings: settings(for: config))
        var problems: [ConfigProblem] = []
        for (i, c) in config.connections.enumerated() {
            do {
                try engine.connect(from: c.from, to: c.to)
            } catch {
                let ports = engine.ports.map(\.name).joined(separator: ", ")
                let allowed: String?
                switch error {
                case .noSuchPort: allowed = ports
                default: allowed = nil
                }
                problems.append(ConfigProblem(file: file, line: c.line, key: "connect[\(i + 1)]",
                                              message: error.description, allowed: allowed))
            }
        }
        return (engine, problems)
    }
}
