import Logging
import StageboxEngine
import StageboxSystem
import Synchronization

/// Keeps the run-time state: hears every change of the graph and of mutes (whoever made it:
/// the console, a client, the ALSA plugin), remembers it on top of the configuration, writes it
/// a moment after each change (`writeDelayNanos`, so a burst of changes is one write), and
/// restores it at start and whenever a remembered client port appears again.
///
/// Ports of stagebox's own (`stagebox.*`: the recorder's, the player's) are left out: stagebox
/// makes their connections itself.
public final class StateKeeper: Sendable {
    public let file: StateFile
    private let engine: Engine
    private let configured: Set<Connection>
    private let writeDelayNanos: Int64
    private let logger: Logger
    private let memory: Mutex<Memory>
    /// Held while the file is written, by the writer thread or the console (`state save`,
    /// `state clear`): both write through the one temporary FILE.new, and the state written is
    /// taken inside, so that the last write is of the newest state.
    private let writing = Mutex(())
    private let loop = Mutex<ServiceLoop?>(nil)
    /// How long a port that appears waits before its remembered connections are made: a client
    /// that connects its own ports first (the ALSA plugin, `stagebox record --from`) is not raced.
    static let restoreDelayNanos: Int64 = 300_000_000
    /// Remembered connections and mutes of ports that are gone, at most: the oldest go first
    /// (programs named after their process id never come back).
    static let absentLimit = 64

    private struct Memory {
        var state = SavedState()
        var lastConnections: Set<Connection> = []
        var ports: Set<String> = []
        /// Ports that appeared, with when their remembered connections are due.
        var appeared: [(port: String, due: Int64)] = []
        var dirtySince: Int64?
        var stopping = false
        var writes = 0
        var lastError: String?
    }

    public init(file: StateFile, engine: Engine, configured: [Connection], writeDelayNanos: Int64, logger: Logger) {
        self.file = file
        self.engine = engine
        self.configured = Set(configured)
        self.writeDelayNanos = writeDelayNanos
        self.logger = logger
        memory = Mutex(Memory())
    }

    /// Reads the file and (with `restore`) applies it to the engine; then listens to the engine
    /// and starts the writer thread. Returns what it did, one line each, for the log.
    public func start(restore: Bool, now seconds: Int) -> [String] {
        var report: [String] = []
        var state = SavedState()
        switch file.load(now: seconds) {
        case .missing: report.append("state: no \(file.path) yet; it is written at the first change")
        case .loaded(let saved):
            if restore { state = saved } else { report.append("state: \(file.path) not restored ([state] restore = false)") }
        case let .corrupt(problem, aside):
            report.append("state: \(file.path) cannot be read (\(problem)); "
                + (aside.map { "set aside as \($0)" } ?? "it could not be set aside") + "; running on the configuration")
        }
        let ports = Set(engine.ports.map(\.name))
        memory.withLock { $0.state = state; $0.ports = ports; $0.lastConnections = Set(engine.connections) }
        report += apply(state, present: ports)
        engine.onChange { [weak self] change in self?.heard(change) }
        // The graph as restored is the state from now on (what could not be made waits for its port).
        heard(.connectionsChanged)
        do {
            let writer = try ServiceLoop(named: "the state writer")
            loop.withLock { $0 = writer }
            try writer.start({ [self] _ in .init(deadline: turn()) }, finish: { [self] in _ = turn() })
        } catch {
            loop.withLock { $0 = nil }
            report.append("state: the writer thread cannot start (\(error)); changes are saved only by `state save`")
        }
        return report
    }

    /// Writes what is pending and stops the writer.
    public func stop() {
        memory.withLock { $0.stopping = true }
        loop.withLock { let l = $0; $0 = nil; return l }?.stop()
    }

    /// Applies `state`: the configuration's connections it removed, its connections and mutes
    /// whose ports are here. Returns what could not be done.
    private func apply(_ state: SavedState, present: Set<String>) -> [String] {
        var report: [String] = []
        for c in state.removed where present.contains(c.from) && present.contains(c.to) {
            do { try engine.disconnect(c) } catch { if case .notConnected = error {} else { report.append("state: \(c) cannot be removed: \(error)") } }
        }
        for c in state.connections where present.contains(c.from) && present.contains(c.to) {
            do { try engine.connect(c) } catch { if case .alreadyConnected = error {} else { report.append("state: \(c) cannot be made: \(error)") } }
        }
        for port in state.muted where present.contains(port) { try? engine.setMuted(port, true) }
        let waiting = state.connections.filter { !present.contains($0.from) || !present.contains($0.to) }.count
        if !state.isEmpty {
            report.append("state: restored \(state.connections.count - waiting) connections, \(state.removed.count) removed, "
                + "\(state.muted.filter(present.contains).count) mutes"
                + (waiting > 0 ? "; \(waiting) wait for their client's port" : ""))
        }
        return report
    }

    private static func own(_ port: String) -> Bool { port.hasPrefix("stagebox.") }

    /// Every change the engine announces, on the thread that made it.
    private func heard(_ change: EngineChange) {
        switch change {
        case .portAdded(let port):
            memory.withLock {
                $0.ports.insert(port)
                $0.appeared.append((port, monotonicNanoseconds() + Self.restoreDelayNanos))
            }
            loop.withLock { $0 }?.wake()
        case .portRemoved(let port):
            memory.withLock { _ = $0.ports.remove(port) }
        case .connectionsChanged:
            let now = Set(engine.connections)
            memory.withLock { m in
                let before = m.state
                for c in now.subtracting(m.lastConnections) where !Self.own(c.from) && !Self.own(c.to) {
                    if configured.contains(c) { m.state.removed.removeAll { $0 == c } }
                    else if !m.state.connections.contains(c) { m.state.connections.append(c) }
                }
                // Gone with both ends still here: someone disconnected it. Gone with a port: its
                // client left, and it is kept for its return.
                for c in m.lastConnections.subtracting(now) where m.ports.contains(c.from) && m.ports.contains(c.to) {
                    if configured.contains(c) { if !m.state.removed.contains(c) { m.state.removed.append(c) } }
                    else { m.state.connections.removeAll { $0 == c } }
                }
                m.lastConnections = now
                trimAbsent(&m)
                if m.state != before { markDirty(&m) }
            }
        case let .muteChanged(port, muted):
            guard !Self.own(port) else { return }
            memory.withLock { m in
                let before = m.state
                if muted { if !m.state.muted.contains(port) { m.state.muted.append(port) } }
                else { m.state.muted.removeAll { $0 == port } }
                trimAbsent(&m)
                if m.state != before { markDirty(&m) }
            }
        }
    }

    private func markDirty(_ m: inout Memory) {
        if m.dirtySince == nil { m.dirtySince = monotonicNanoseconds() }
        loop.withLock { $0 }?.wake()
    }

    private func trimAbsent(_ m: inout Memory) {
        let ports = m.ports
        while m.state.connections.filter({ !ports.contains($0.from) || !ports.contains($0.to) }).count > Self.absentLimit,
              let i = m.state.connections.firstIndex(where: { !ports.contains($0.from) || !ports.contains($0.to) }) {
            m.state.connections.remove(at: i)
        }
        while m.state.muted.filter({ !ports.contains($0) }).count > Self.absentLimit,
              let i = m.state.muted.firstIndex(where: { !ports.contains($0) }) {
            m.state.muted.remove(at: i)
        }
    }

    /// The writer thread: restores ports that appeared once their delay is over, and writes the
    /// state a moment after it changed.
    /// One turn of the writer thread (and its last, after a stop): the connections of ports
    /// that came back are made, the state is written once it has settled (at once when
    /// stopping). Every 50 ms: the next port or write due is never further away.
    private func turn() -> Int64 {
        let now = monotonicNanoseconds()
        let (due, write) = memory.withLock { m -> ([String], Bool) in
            let due = m.appeared.filter { $0.due <= now }.map(\.port)
            m.appeared.removeAll { $0.due <= now }
            let write = m.dirtySince.map { now - $0 >= writeDelayNanos || m.stopping } ?? false
            return (due, write)
        }
        if !due.isEmpty { restore(ports: Set(due)) }
        if write { save() }
        return now + 50_000_000
    }

    /// Makes the remembered connections and mutes of `ports`, which appeared again.
    private func restore(ports: Set<String>) {
        let (state, present) = memory.withLock { ($0.state, $0.ports) }
        let current = Set(engine.connections)
        for c in state.connections where (ports.contains(c.from) || ports.contains(c.to))
            && present.contains(c.from) && present.contains(c.to) && !current.contains(c) {
            do {
                try engine.connect(c)
                logger.info("state: \(c) made again: \(ports.contains(c.from) ? c.from : c.to) is back")
            } catch {
                if case .alreadyConnected = error { continue }
                logger.warning("state: \(c) cannot be made again: \(error)")
            }
        }
        for port in state.muted where ports.contains(port) && present.contains(port) { try? engine.setMuted(port, true) }
    }

    private func save() {
        guard case let .failed(error) = writeFile(always: false) else { return }
        let first = memory.withLock { m -> Bool in
            defer { m.lastError = error }
            return m.lastError != error
        }
        // Kept in memory and tried again every second; logged once per distinct problem.
        if first { logger.error("state: \(error); the state is kept in memory and tried again every second") }
    }

    /// Writes the state as it is now, under `writing`; without `always` only when a change is
    /// still unwritten (a `state save` may have written it meanwhile).
    private func writeFile(always: Bool) -> Written {
        writing.withLock { _ -> Written in
            let state = memory.withLock { m -> SavedState? in
                guard always || m.dirtySince != nil else { return nil }
                m.dirtySince = nil
                return m.state
            }
            guard let state else { return .nothing }
            do throws(SystemCallError) {
                try file.write(state)
                memory.withLock { $0.writes += 1; $0.lastError = nil }
                return .written
            } catch {
                // Unwritten still: tried again a second (or the write delay) from now, and at stop.
                memory.withLock { m in
                    if m.dirtySince == nil {
                        m.dirtySince = monotonicNanoseconds() - writeDelayNanos + max(writeDelayNanos, 1_000_000_000)
                    }
                }
                return .failed(error.description)
            }
        }
    }

    private enum Written { case nothing, written, failed(String) }

    // MARK: The console's `state show`, `state save`, `state clear`

    /// The document as it would be written now, and what waits for its port.
    public var shown: String {
        let (state, ports, writes, problem) = memory.withLock { ($0.state, $0.ports, $0.writes, $0.lastError) }
        let waiting = state.connections.filter { !ports.contains($0.from) || !ports.contains($0.to) }
        var lines = ["\(file.path) (written \(writes) times since start\(problem.map { "; last write failed: \($0)" } ?? ""))",
                     state.text.trimmingSuffix()]
        if !waiting.isEmpty { lines.append("waiting for their ports: " + waiting.map(\.description).joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }

    /// Writes the state now.
    public func saveNow() -> String {
        if case let .failed(error) = writeFile(always: true) { return "refused: the state cannot be written: \(error)" }
        return "state written to \(file.path)"
    }

    /// Forgets every remembered change and writes the empty state: the next start runs on the
    /// configuration alone. The graph as it is now stays.
    public func clear() -> String {
        memory.withLock { m in
            m.state = SavedState()
            m.lastConnections = Set(engine.connections)
            m.appeared = []
        }
        let saved = saveNow()
        if saved.hasPrefix("refused: ") { return saved + "; cleared in memory: the file keeps the old state until a write succeeds" }
        return saved + "; cleared: the next start runs on the configuration alone (the graph now is unchanged)"
    }
}

private extension String {
    func trimmingSuffix() -> String {
        var s = self
        while s.last == "\n" { s.removeLast() }
        return s
    }
}
