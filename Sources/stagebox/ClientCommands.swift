import StageboxFormatting
import ArgumentParser
import StageboxAudioFiles
import StageboxClient
import StageboxConfig
import StageboxProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Options every command-line client shares.
struct BusOptions: ParsableArguments {
    @Option(help: "The bus socket (default: $STAGEBOX_SOCKET, else the configuration's [bus] socket, else /run/stagebox/bus.sock as root, else $XDG_RUNTIME_DIR/stagebox/bus.sock, else /tmp/stagebox-UID/bus.sock: where stagebox run listens).")
    var socket: String?

    @Option(help: "The configuration file whose [bus] socket to use (default: /boot/stagebox.toml, then /etc/stagebox.toml, as stagebox run reads).")
    var config: String?

    var socketPath: String {
        socket ?? ConfigLoader.resolve(explicit: config).config.bus.socket
    }

    /// Connects as `name`, or exits 1 with the reason.
    func connect(as name: String) throws -> BusClient {
        do {
            return try BusClient(name: name, socketPath: socketPath)
        } catch {
            printError("stagebox: \(error)")
            throw ExitCode(1)
        }
    }

    /// Connects as `NAME-PID`, makes one request, and closes; a refusal is printed, exit 1.
    func request(as name: String, _ body: (BusClient) throws(BusClientError) -> Void) throws {
        let client = try connect(as: "\(name)-\(getpid())")
        defer { client.close() }
        try busRequest { () throws(BusClientError) in try body(client) }
    }
}

/// Splits `client.port` into its two parts, or fails naming what is wrong.
func splitPortName(_ full: String) throws -> (client: String, port: String) {
    let parts = full.split(separator: ".", maxSplits: 1).map(String.init)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
        throw ValidationError("--port must be CLIENT.PORT (for example player.out), not '\(full)'")
    }
    return (parts[0], parts[1])
}

/// Runs a bus request, turning a refusal into one line on stderr and exit status 1.
func busRequest<T>(_ body: () throws(BusClientError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        printError("stagebox: \(error)")
        throw ExitCode(1)
    }
}

struct PortsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ports", abstract: "List the bus's ports and connections.")
    @OptionGroup var bus: BusOptions

    func run() throws {
        let client = try bus.connect(as: "ports-\(getpid())")
        defer { client.close() }
        let ports = try busRequest { () throws(BusClientError) in try client.ports() }
        let connections = try busRequest { () throws(BusClientError) in try client.connections() }
        let width = max(12, ports.map(\.name.count).max() ?? 0)
        print("PORT".padded(width) + "  KIND      CH  OWNER     STATE")
        for p in ports {
            print(p.name.padded(width) + "  " + "\(p.kind)".padded(8) + "  " + String(p.channels).padded(2) + "  "
                  + p.owner.padded(8) + "  " + (p.muted ? "muted" : ""))
        }
        print(connections.isEmpty ? "no connections" : "connections:")
        for c in connections { print("  \(c.from) -> \(c.to)") }
    }
}

struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "connect", abstract: "Connect a sender or filter to a filter or receiver.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The sender or filter port, for example codec.in, or one of its channels, codec.in:1.") var from: String
    @Argument(help: "The filter or receiver port, for example rec.in, or one of its channels, rec.in:2.") var to: String

    func run() throws {
        try bus.request(as: "connect") { client throws(BusClientError) in try client.connect(from: from, to: to) }
    }
}

struct DisconnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "disconnect", abstract: "Remove a connection.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The sender or filter port, or one of its channels (PORT:CHANNEL).") var from: String
    @Argument(help: "The filter or receiver port, or one of its channels (PORT:CHANNEL).") var to: String

    func run() throws {
        try bus.request(as: "disconnect") { client throws(BusClientError) in try client.disconnect(from: from, to: to) }
    }
}

struct MuteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mute", abstract: "Mute a port.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The port to mute, for example codec.in.") var port: String

    func run() throws {
        try bus.request(as: "mute") { client throws(BusClientError) in try client.setMuted(port, true) }
    }
}

struct UnmuteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unmute", abstract: "Unmute a port.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The port to unmute.") var port: String

    func run() throws {
        try bus.request(as: "unmute") { client throws(BusClientError) in try client.setMuted(port, false) }
    }
}
