import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A swift-log handler that formats a line and hands it to a `LogWriter`: the thread that logs
/// never touches the output descriptor.
public struct QueuedLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    let label: String
    let writer: LogWriter

    public init(label: String, writer: LogWriter) {
        self.label = label
        self.writer = writer
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let more = event.metadata { all.merge(more) { $1 } }
        let extra = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let error = event.error.map { " (\($0))" } ?? ""
        writer.write("\(Self.timestamp()) \(event.level) \(label):\(extra) [\(event.source)] \(event.message)\(error)")
    }

    /// Local time as 2026-11-22T20:30:12+0000.
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
