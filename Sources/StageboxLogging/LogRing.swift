import Logging
import Synchronization

/// Keeps the last lines of stagebox's own log in memory, for the console's `log`.
final class LogRing: Sendable {
    static let shared = LogRing(capacity: 500)

    private let lines = Mutex<[String]>([])
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func append(_ line: String) {
        lines.withLock {
            $0.append(line)
            if $0.count > capacity { $0.removeFirst($0.count - capacity) }
        }
    }

    func last(_ count: Int) -> [String] { lines.withLock { Array($0.suffix(count)) } }
}

/// A swift-log handler that writes into the ring.
struct LogRingHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    let label: String

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        LogRing.shared.append("\(level) \(message)")
    }
}
