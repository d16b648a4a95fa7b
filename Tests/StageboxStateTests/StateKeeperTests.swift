import Foundation
import Logging
import StageboxEngine
import StageboxState
import StageboxTestSupport
import Testing

/// The keeper against a real engine and real files: what a restart finds, a client that comes
/// back, a file cut short.
@Suite(.serialized) struct StateKeeperTests {
    static let configured = [Connection(from: "codec.in", to: "codec.out")]

    /// An engine as `stagebox run` builds it from a configuration with the default connection.
    func engine() throws -> Engine {
        let e = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2, toneSignal: .silence))
        try e.connect(from: "codec.in", to: "codec.out")
        return e
    }

    func keeper(_ engine: Engine, _ path: String, delayMs: Int64 = 0) -> StateKeeper {
        StateKeeper(file: StateFile(path: path), engine: engine, configured: Self.configured,
                    writeDelayNanos: delayMs * 1_000_000, logger: Logger(label: "test"))
    }

    /// A scratch folder, an engine, and a keeper of `state.toml` in the folder, started.
    func started() throws -> (Scratch, Engine, StateKeeper) {
        let dir = try Scratch()
        let e = try engine()
        let k = keeper(e, dir.path("state.toml"))
        _ = k.start(restore: true, now: 1)
        return (dir, e, k)
    }

    func addClientPort(_ engine: Engine, _ name: String, _ kind: PortKind) throws {
        try engine.addPort(PortDescriptor(name: name, title: "", kind: kind, channels: 2), processor: nil)
    }

    func contents(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Changes from the console survive a restart: a new engine from the same configuration gets
    /// them back, removed connection included, and the mute.
    @Test func changesComeBackAfterARestart() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let path = dir.path("state.toml")
        let first = try engine()
        let k1 = keeper(first, path)
        #expect(k1.start(restore: true, now: 1).contains { $0.contains("no \(path) yet") })
        try first.disconnect(from: "codec.in", to: "codec.out")
        try first.connect(from: "tone", to: "codec.out:2")
        try first.setMuted("codec.in", true)
        #expect(waitFor(30) { contents(path).contains("muted = [\"codec.in\"]") })
        // No stop(): as after SIGKILL, whatever was written is all there is.

        let second = try engine()
        let k2 = keeper(second, path)
        defer { k2.stop(); k1.stop() }
        let report = k2.start(restore: true, now: 2)
        #expect(report.contains { $0.contains("restored 1 connections, 1 removed, 1 mutes") }, "\(report)")
        #expect(second.connections.map(\.description) == ["tone -> codec.out:2"])
        #expect(try second.isMuted("codec.in"))
    }

    /// A connection to a client's port is remembered when the client leaves and made again
    /// when a port of that name comes back.
    @Test func aClientsConnectionIsRestoredWhenItReturns() throws {
        let (dir, e, k) = try started()
        defer { k.stop(); dir.remove() }
        try addClientPort(e, "call.out", .sender)
        try addClientPort(e, "call.in", .receiver)
        try e.connect(from: "call.out", to: "codec.out")
        try e.connect(from: "codec.in", to: "call.in")
        try e.setMuted("call.out", true)
        try e.removePort("call.out") // the app quits
        try e.removePort("call.in")
        #expect(e.connections.map(\.description) == ["codec.in -> codec.out"])
        #expect(k.shown.contains("waiting for their ports: call.out -> codec.out, codec.in -> call.in"), "\(k.shown)")

        try addClientPort(e, "call.out", .sender) // and starts again
        try addClientPort(e, "call.in", .receiver)
        #expect(waitFor(30) { e.connections.count == 3 })
        #expect(Set(e.connections.map(\.description)) == ["codec.in -> codec.out", "call.out -> codec.out", "codec.in -> call.in"])
        #expect(try e.isMuted("call.out"))
        // Disconnected by someone while both ends are there: forgotten.
        try e.disconnect(from: "call.out", to: "codec.out")
        #expect(waitFor(30) { !contents(dir.path("state.toml")).contains("call.out -> codec.out") })
    }

    /// A client that connects its own port first (the ALSA plugin, `stagebox record --from`)
    /// is not raced: the restore waits a moment and finds it made.
    @Test func aClientThatConnectsItselfIsNotRaced() throws {
        let (dir, e, k) = try started()
        defer { k.stop(); dir.remove() }
        try addClientPort(e, "aplay-1.out", .sender)
        try e.connect(from: "aplay-1.out", to: "codec.out")
        try e.removePort("aplay-1.out")
        try addClientPort(e, "aplay-1.out", .sender)
        try e.connect(from: "aplay-1.out", to: "codec.out") // its own connect, at once: no error
        usleep(600_000)
        #expect(e.connections.filter { $0.from == "aplay-1.out" }.count == 1)
    }

    /// Ports named after a process id never come back: at most 64 absent ones are remembered.
    @Test func absentPortsAreForgottenOldestFirst() throws {
        let (dir, e, k) = try started()
        defer { k.stop(); dir.remove() }
        for i in 0..<80 {
            try addClientPort(e, "aplay-\(i).out", .sender)
            try e.connect(from: "aplay-\(i).out", to: "codec.out")
            try e.removePort("aplay-\(i).out")
        }
        #expect(waitFor(30) { contents(dir.path("state.toml")).contains("aplay-79.out") })
        let saved = try SavedState.parse(contents(dir.path("state.toml")))
        #expect(saved.connections.count == 64)
        #expect(saved.connections.first?.from == "aplay-16.out")
    }

    /// A state file cut at any byte is set aside under a name that says so (its last line,
    /// `complete = true`, tells a whole file from a cut one), and stagebox runs on the
    /// configuration.
    @Test func aFileCutAtAnyByteIsSetAside() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let whole = SavedState(connections: [Connection(from: "tone", to: "codec.out")],
                               removed: [Connection(from: "codec.in", to: "codec.out")], muted: ["codec.in"]).text
        let bytes = Array(whole.utf8)
        var cuts = Array(Set((0..<20).map { _ in Int.random(in: 0..<(bytes.count - 1)) }))
        cuts.append(bytes.count / 2)
        for cut in cuts {
            let path = dir.path("state-\(cut).toml")
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes[0..<cut])))
            let e = try engine()
            let k = keeper(e, path)
            let report = k.start(restore: true, now: 1000 + cut)
            k.stop()
            #expect(report.contains { $0.contains("cannot be read") }, "cut at \(cut): \(report)")
            #expect(report.contains { $0.contains("set aside as \(path).corrupt-\(1000 + cut); running on the configuration") },
                    "\(report)")
            #expect(FileManager.default.fileExists(atPath: "\(path).corrupt-\(1000 + cut)"))
            #expect(e.connections.map(\.description) == ["codec.in -> codec.out"], "cut at \(cut)")
        }
        // The whole file minus its last newline is whole.
        let path = dir.path("state-whole.toml")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes[0..<(bytes.count - 1)])))
        let k = keeper(try engine(), path)
        #expect(k.start(restore: true, now: 1).contains { $0.contains("restored 1 connections") })
        k.stop()
    }

    /// An unwritable place is logged, not fatal: the state stays in memory, and `state save`
    /// says why it cannot write.
    @Test func anUnwritableFileIsReportedByStateSave() throws {
        let e = try engine()
        let k = keeper(e, "/nonexistent-dir/state.toml")
        defer { k.stop() }
        _ = k.start(restore: true, now: 1)
        try e.setMuted("codec.in", true)
        #expect(k.saveNow().contains("/nonexistent-dir/state.toml.new"), "\(k.saveNow())")
        #expect(k.shown.contains("muted = [\"codec.in\"]"))
    }

    /// A folder that is not there yet (a data partition mounted late): the write is tried again
    /// every second and lands once it can.
    @Test func aFailedWriteIsTriedAgain() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let path = dir.path("late/state.toml")
        let e = try engine()
        let k = keeper(e, path)
        defer { k.stop() }
        _ = k.start(restore: true, now: 1)
        try e.setMuted("codec.in", true)
        usleep(300_000)
        #expect(k.shown.contains("last write failed"), "\(k.shown)")
        try FileManager.default.createDirectory(atPath: dir.path("late"), withIntermediateDirectories: false)
        #expect(waitFor(30) { contents(path).contains("muted = [\"codec.in\"]") })
    }

    /// `state clear` empties the file; the graph as it is stays.
    @Test func clearForgetsButLeavesTheGraph() throws {
        let (dir, e, k) = try started()
        defer { k.stop(); dir.remove() }
        try e.connect(from: "tone", to: "codec.out")
        #expect(k.clear().contains("cleared"))
        #expect(try SavedState.parse(contents(dir.path("state.toml"))).isEmpty)
        #expect(e.connections.count == 2)
    }
}
