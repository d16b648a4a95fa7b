import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
        for line in keeper.start(restore: section.restore, now: Int(time(nil))) {
            // The keeper's lines about a file or a connection it could not use are errors.
            let failed = line.split(separator: " ").contains { $0 == "cannot" }
            if failed { logger.error("\(line)") } else { logger.info("\(line)") }
        }
        return keeper
    }
}
