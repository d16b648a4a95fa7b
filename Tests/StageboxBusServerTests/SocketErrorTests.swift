import Foundation
import Logging
import StageboxBusServer
import StageboxClient
import StageboxEngine
import Testing
import StageboxTriggers

/// The bus's socket errors name the socket and say why in words.
@Suite struct SocketErrorTests {
    private func server(at path: String) throws -> BusServer {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2,
                                                     toneSignal: .silence))
        return try BusServer(settings: BusServerSettings(socketPath: path, maxClients: 1, maxPortsPerClient: 1,
                                                         filterDeadlinePercent: 25),
                             engine: engine, triggers: TriggerBoard(), logger: logger, serverVersion: "test")
    }

    @Test func aSocketPathTooLongIsRefusedNamingIt() throws {
        let path = NSTemporaryDirectory() + String(repeating: "long-", count: 30) + "bus.sock"
        let bus = try server(at: path)
        do {
            try bus.start()
            bus.stop()
            Issue.record("a bus started at a \(path.utf8.count)-byte path")
        } catch {
            #expect(error.path == path)
            #expect(error.description.contains("the socket path \(path) is \(path.utf8.count) bytes long"))
        }
    }

    @Test func aClientWhereNoStageboxRunsIsToldWhyInWords() {
        let path = NSTemporaryDirectory() + "stagebox-none-\(getpid()).sock"
        do {
            _ = try BusClient(name: "nobody", socketPath: path)
            Issue.record("connected to \(path)")
        } catch {
            #expect(error == .notRunning(path: path, errno: .noSuchFileOrDirectory))
            #expect(error.description == "no stagebox is running at \(path) (No such file or directory)")
        }
    }

    @Test func aClientSocketPathTooLongNamesIt() {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        do {
            _ = try BusClient(name: "nobody", socketPath: path)
            Issue.record("connected to \(path)")
        } catch {
            #expect(error.description.contains(path))
            #expect(error.description.contains("bytes long"))
        }
    }
}
