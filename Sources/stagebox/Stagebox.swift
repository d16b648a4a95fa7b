import ArgumentParser
import Logging
import StageboxLogging
import StageboxSystem

/// `stagebox`: the firmware's one binary.
@main
struct Stagebox: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stagebox",
        abstract: "Audio appliance firmware: the codec loop, the bus, and their tools.",
        version: StageboxVersion.string,
        subcommands: [RunCommand.self, RenderCommand.self, CheckConfigCommand.self, DevicesCommand.self,
                      PlayCommand.self, RecordCommand.self, NoiseCommand.self, PortsCommand.self,
                      ConnectCommand.self, DisconnectCommand.self, MuteCommand.self, UnmuteCommand.self,
                      TriggerCommand.self, ConsoleCommand.self, UpdateCommand.self, DiagCommand.self, LatencyCommand.self])

    static func main() {
        // Before any thread or malloc arena exists (see HugePages).
        HugePages.refuse()
        main(nil)
    }
}

enum StageboxVersion {
    static let string = "0.1.0"
}

/// Logging to stderr, one line per event, through a writer thread: nothing that logs waits on
/// the terminal (see `LogWriter`).
enum Log {
    static let writer = LogWriter(output: 2)

    static func bootstrap() {
        LoggingSystem.bootstrap { label in
            var handler = QueuedLogHandler(label: label, writer: writer)
            handler.logLevel = .info
            // Also kept in memory for the console's `log`.
            return MultiplexLogHandler([handler, LogRingHandler(label: label)])
        }
    }
}
