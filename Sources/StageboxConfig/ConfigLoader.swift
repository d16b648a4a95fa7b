import StageboxProtocol
import StageboxSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a configuration came from.
public enum ConfigSource: Sendable, Equatable, CustomStringConvertible {
    case file(String)
    case builtinDefaults

    public var description: String {
        switch self {
        case .file(let path): return path
        case .builtinDefaults: return "built-in defaults"
        }
    }
}

/// The configuration in effect, where it came from, and what was wrong with the file.
public struct LoadedConfig: Sendable {
    public var config: StageboxConfiguration
    public var source: ConfigSource
    /// Problems in the file; when there are any, `config` is the built-in defaults.
    public var problems: [ConfigProblem]
    /// The file that was read, with or without problems (nil when there was none, or the path
    /// named no file): a file with problems is still where the user keeps the configuration,
    /// and where a support bundle goes.
    public var file: String?

    public init(config: StageboxConfiguration, source: ConfigSource, problems: [ConfigProblem], file: String? = nil) {
        self.config = config
        self.source = source
        self.problems = problems
        self.file = file
    }
}

/// Finds and reads the configuration file.
public enum ConfigLoader {
    /// Where `stagebox run` looks when no `--config` is given, in order.
    public static let searchPath = ["/boot/stagebox.toml", "/etc/stagebox.toml"]

    /// Reads and checks one file. Throws `ConfigErrors` with every problem found.
    public static func load(path: String) throws(ConfigErrors) -> StageboxConfiguration {
        let reading = read(path: path)
        guard var config = reading.config, reading.problems.isEmpty else { throw ConfigErrors(reading.problems) }
        // The environment names the socket for this session, over what the file says, so
        // that the board and its clients started with it agree.
        if let socket = DefaultSocket.fromEnvironment { config.bus.socket = socket }
        return config
    }

    /// Reads one file as far as it goes, for a checker that reports everything at once: the
    /// configuration with each value that has a problem left at its default (nil when the file
    /// cannot be read or is not TOML) and every problem, in line order.
    public static func read(path: String) -> ConfigReading {
        let text: String
        do { text = try readText(path) } catch { return ConfigReading(config: nil, problems: [error]) }
        return ConfigParser.read(text, file: path)
    }

    /// The configuration to run with: `explicit` if given, else the first file of `searchPath`
    /// that exists, else the defaults. A file with problems gives the defaults and its problems,
    /// so that the appliance still starts.
    public static func resolve(explicit: String?, searchPath: [String] = searchPath) -> LoadedConfig {
        let path = explicit ?? searchPath.first { access($0, F_OK) == 0 }
        guard let path else { return LoadedConfig(config: .defaults, source: .builtinDefaults, problems: []) }
        do {
            return LoadedConfig(config: try load(path: path), source: .file(path), problems: [], file: path)
        } catch {
            var info = stat()
            let isFile = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            return LoadedConfig(config: .defaults, source: .builtinDefaults, problems: error.problems, file: isFile ? path : nil)
        }
    }

    /// The whole text of `path`, or a problem saying why it cannot be read.
    static func readText(_ path: String) throws(ConfigProblem) -> String {
        // Only a file: a FIFO would hold the open until someone writes to it, a device forever.
        var info = stat()
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "a directory" : (info.st_mode & S_IFMT) == S_IFIFO ? "a FIFO" : "a device"
            throw ConfigProblem(file: path, line: nil, key: "", message: "is \(kind), not a configuration file")
        }
        guard let f = fopen(path, "rb") else {
            throw ConfigProblem(file: path, line: nil, key: "", message: "\(Errno.last)")
        }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n > 0 { bytes += chunk[0..<n] }
            if n < chunk.count { break }
            if bytes.count > 1 << 20 {
                throw ConfigProblem(file: path, line: nil, key: "", message: "larger than 1 MiB")
            }
        }
        if ferror(f) != 0 {
            throw ConfigProblem(file: path, line: nil, key: "", message: "\(Errno.last)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigProblem(file: path, line: nil, key: "", message: "not UTF-8 text")
        }
        if text.utf8.contains(0) {
            throw ConfigProblem(file: path, line: nil, key: "", message: "contains NUL bytes")
        }
        return text
    }
}
