import DequeModule
import Logging
import Synchronization

/// Keeps the last lines of stagebox's own log in memory, for the console's `log`.
public final class LogRing: Sendable {
    public static let shared = LogRing(capacity: 2000) // the support bundle carries them all

    private let lines = Mutex<Deque<String>>([])
    private let capacity: Int

    public init(capacity: Int) { self.capacity = capacity }

    public func append(_ line: String) {
        lines.withLock {
            $0.append(line)
            if $0.count > capacity { $0.removeFirst($0.count - capacity) }
        }
    }

    public func last(_ count: Int) -> [String] { lines.withLock { Array($0.suffix(count)) } }
}

/// A swift-log handler that writes into the ring.
public struct LogRingHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        LogRing.shared.append("\(event.level) \(event.message)")
    }
}
