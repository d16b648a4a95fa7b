import Foundation
import Logging
import StageboxConfig
import StageboxEngine
import StageboxPortRules
import StageboxState

/// `[state]` in `stagebox run`: the run-time changes restored at start and kept as they happen.
enum RunningState {
    /// Starts the keeper (nil without `[state]`).
    static func start(_ config: StageboxConfiguration, engine: Engine, logger: Logger) -> StateKeeper? {
        guard let section = config.state else { return nil }
        let configured = config.connections.compactMap { entry -> Connection? in
            guard let from = try? PortEndpoint(parsing: entry.from), let to = try? PortEndpoint(parsing: entry.to) else { return nil }
            return Connection(from, to)
        }
        let keeper = StateKeeper(file: StateFile(path: section.file), engine: engine, configured: configured,
                                 writeDelayNanos: Int64(section.writeDelayMs) * 1_000_000, logger: logger)
        for line in keeper.start(restore: section.restore, now: Int(Date().timeIntervalSince1970)) {
            if line.contains(" cannot ") || line.contains("could not") { logger.error("\(line)") } else { logger.info("\(line)") }
        }
        return keeper
    }
}
