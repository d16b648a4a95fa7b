import StageboxEngine
import StageboxConfig

/// Builds the engine a configuration describes and makes its connections.
public enum EngineBuilder {
    /// - Parameter fades: whether the codec outputs fade in and out (`[lifecycle] fade_ms`): for
    ///   a running codec; an offline render is not faded.
    public static func settings(for config: StageboxConfiguration, fades: Bool = false) -> EngineSettings {
        EngineSettings(sampleRate: config.audio.rate, period: config.audio.period,
                       inputs: config.audio.inputs, outputs: config.audio.outputs,
                       toneSignal: ToneSignal(rawValue: config.tone.signal) ?? .sine,
                       toneFrequency: config.tone.frequency, toneLevelDB: config.tone.levelDB,
                       fadeMilliseconds: fades ? config.lifecycle.fadeMs : 0)
    }

    /// The engine with every `[[connect]]` that can be made; the ones that cannot are returned
    /// as problems that name their file and line (the built-in default connection has no line).
    ///
    /// `uncertainPorts` are ports whose channel count is only a default because its key had a
    /// problem: a connection to them is still checked for everything but its channels.
    public static func make(_ config: StageboxConfiguration, file: String, fades: Bool = false,
                     uncertainPorts: Set<String> = []) -> (Engine, [ConfigProblem]) {
        let engine = Engine(settings: settings(for: config, fades: fades))
        var problems: [ConfigProblem] = []
        for c in config.connections {
            do {
                try engine.connect(from: c.from, to: c.to)
            } catch {
                if Self.concernsChannels(of: uncertainPorts, error) { continue }
                let allowed: String?
                switch error {
                case .noSuchPort: allowed = engine.ports.map(\.name).joined(separator: ", ")
                default: allowed = nil
                }
                problems.append(c.line > 0
                    ? ConfigProblem(file: file, line: c.line, key: "connect[\(c.number)]", message: error.description, allowed: allowed)
                    : ConfigProblem(file: file, line: nil, key: "connect",
                                    message: "the default connection \(c.from) -> \(c.to): \(error.description); "
                                        + "[[connect]] sections choose others", allowed: allowed))
            }
        }
        return (engine, problems)
    }

    /// Whether `error` is about the channels of one of `ports`.
    private static func concernsChannels(of ports: Set<String>, _ error: EngineError) -> Bool {
        switch error {
        case let .noSuchChannel(port, _, _): return ports.contains(port)
        case let .channelMismatch(from, _, to, _): return ports.contains(from) || ports.contains(to)
        case let .overlaps(connection, _): return ports.contains(connection.from) || ports.contains(connection.to)
        default: return false
        }
    }
}
