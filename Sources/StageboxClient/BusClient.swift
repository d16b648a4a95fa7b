import StageboxPortRules
import StageboxProtocol
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The Audiobus-style controller: connects a program to a running stagebox and makes its ports.
///
/// ```swift
/// let bus = try BusClient(name: "myapp")
/// let mic = try bus.addReceiver(name: "mic", channels: 1, sampleRate: 16000)
/// try bus.connect(from: "codec.in", to: mic.name)
/// ```
public final class BusClient: Sendable {

    /// The socket `stagebox run` uses when nothing names one (`DefaultSocket`).
    public static var defaultSocketPath: String { DefaultSocket.path }

    public let connection: BusConnection
    /// Port names this client's ports are connected to, kept fresh from the server's events.
    private let connected = Mutex<Set<String>>([])
    private let muted = Mutex<Set<String>>([])
    private let refresh = Atomic<Bool>(true)
    private let running = Atomic<Bool>(true)
    /// Keeps the connection state fresh and calls fired triggers' handlers; it sleeps until an
    /// event gives it work, not on a timer.
    private let refresher: ServiceLoop
    private let handlers = Mutex<[@Sendable (BusEvent) -> Void]>([])
    private let ownPorts = Mutex<[String: PortState]>([:])
    /// This client's triggers (by bus name) and what to call when one fires.
    let ownTriggers = Mutex<[String: TriggerEntry]>([:])
    /// Triggers fired, waiting for the refresher thread to call their handlers.
    let firedTriggers = Mutex<[String]>([])

    public init(name: String, socketPath: String = BusClient.defaultSocketPath) throws(BusClientError) {
        do throws(SystemCallError) {
            // The system's stack: it calls the program's trigger and event handlers.
            refresher = try ServiceLoop(named: "the bus client's refresher", stackSize: nil)
        } catch {
            throw .connection("\(error)")
        }
        connection = try BusConnection(socketPath: socketPath, name: name)
        connection.onEvent { [weak self] event in self?.received(event) }
        do throws(SystemCallError) {
            try startRefresher()
        } catch {
            // Without it the ports' connection state would never change: no client at all.
            connection.disconnect()
            throw .connection("\(error)")
        }
    }

    deinit { close() }

    /// Leaves the bus; every port of this client disappears.
    public func close() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        // The last reference may be dropped on the refresher thread itself: it then detaches.
        refresher.stop()
        connection.disconnect()
    }

    public var name: String { connection.clientName }
    public var sampleRate: Int { connection.sampleRate }
    public var period: Int { connection.period }

    /// Calls `handler` for every bus event (connections changed, ports added or removed, mutes,
    /// triggers, the server stopping). Runs on the connection's reader thread.
    public func onEvent(_ handler: @escaping @Sendable (BusEvent) -> Void) {
        handlers.withLock { $0.append(handler) }
    }

    // MARK: Ports

    public func addSender(name: String, title: String = "", channels: Int, sampleRate: Int? = nil,
                          format: WireFormat = .float32) throws(BusClientError) -> SenderPort {
        let (info, fds) = try createPort(PortRequest(name: name, title: title, kind: .sender, channels: channels,
                                                     format: format, sampleRate: sampleRate ?? self.sampleRate))
        return try SenderPort(client: self, info: info, fds: fds, sampleRate: sampleRate ?? self.sampleRate)
    }

    /// A receiver. With `separateStreams`, it takes each connected source apart (at the bus rate)
    /// through `receiveInterval`, instead of their mix.
    public func addReceiver(name: String, title: String = "", channels: Int, sampleRate: Int? = nil,
                            format: WireFormat = .float32, separateStreams: Bool = false) throws(BusClientError) -> ReceiverPort {
        let (info, fds) = try createPort(PortRequest(name: name, title: title, kind: .receiver, channels: channels,
                                                     format: format, sampleRate: sampleRate ?? self.sampleRate,
                                                     receiverMode: separateStreams ? .separate : .mixed))
        return try ReceiverPort(client: self, info: info, fds: fds, sampleRate: sampleRate ?? self.sampleRate)
    }

    /// A filter: `process` runs on the port's own thread for every period, in place, within the
    /// bus's deadline (a quarter of the period unless configured otherwise).
    public func addFilter(name: String, title: String = "", channels: Int,
                          process: @escaping @Sendable (_ samples: UnsafeMutablePointer<Float>, _ frames: Int, _ timestamp: FrameTimestamp) -> Void)
        throws(BusClientError) -> FilterPort {
        let (info, fds) = try createPort(PortRequest(name: name, title: title, kind: .filter, channels: channels,
                                                     format: .float32, sampleRate: sampleRate))
        return try FilterPort(client: self, info: info, fds: fds, process: process)
    }

    private func createPort(_ request: PortRequest) throws(BusClientError) -> (PortInfo, [OwnedDescriptor]) {
        let (answer, fds) = try connection.request(.createPort(request))
        guard case let .portCreated(info, _) = answer else { throw .connection("unexpected answer: \(answer)") }
        ownPorts.withLock { $0[info.name] = PortState() }
        refresh.store(true, ordering: .relaxed)
        refresher.wake()
        return (info, fds)
    }

    func removePort(_ name: String) {
        _ = try? connection.request(.removePort(name))
        ownPorts.withLock { $0[name] = nil }
    }

    // MARK: The bus

    public func ports() throws(BusClientError) -> [PortInfo] {
        let (answer, _) = try connection.request(.listPorts)
        guard case .ports(let list) = answer else { throw .connection("unexpected answer: \(answer)") }
        return list
    }

    public func connections() throws(BusClientError) -> [(from: String, to: String)] {
        let (answer, _) = try connection.request(.listConnections)
        guard case .connections(let list) = answer else { throw .connection("unexpected answer: \(answer)") }
        return list
    }

    /// Connects `from` to `to`, each a port (`codec.in`) or one of its channels (`codec.in:1`).
    public func connect(from: String, to: String) throws(BusClientError) {
        _ = try connection.request(.connect(from: from, to: to))
    }

    public func disconnect(from: String, to: String) throws(BusClientError) {
        _ = try connection.request(.disconnect(from: from, to: to))
    }

    public func setMuted(_ port: String, _ value: Bool) throws(BusClientError) {
        _ = try connection.request(.setMuted(port: port, muted: value))
    }

    /// Runs a line of the console (as on the serial port) and returns its answer.
    public func console(_ line: String) throws(BusClientError) -> String { try consoleRun(line).text }

    /// Runs a line of the console; its answer, and whether the command failed.
    /// A line may take a while: `record stop` waits up to 10 s for the take's files to be
    /// whole, `diag bundle` writes a file; so the answer is waited for longer than a request's.
    public func consoleRun(_ line: String) throws(BusClientError) -> (text: String, failed: Bool) {
        let (answer, _) = try connection.request(.consoleLine(line), timeoutSeconds: 30)
        guard case let .consoleAnswer(text, failed) = answer else { throw .connection("unexpected answer: \(answer)") }
        return (text, failed)
    }

    /// What Tab would complete at the end of a console line.
    public func consoleCompletions(_ line: String) throws(BusClientError) -> [String] {
        let (answer, _) = try connection.request(.consoleComplete(line))
        guard case .completions(let list) = answer else { throw .connection("unexpected answer: \(answer)") }
        return list
    }

    /// Fires a trigger: a built-in one (`mute`) or a client's (`call.mic-mute`). A disabled
    /// trigger is not fired: that throws `.refused(.triggerDisabled, "trigger NAME is disabled")`;
    /// one whose own action failed, and `update` (it only shows a state), throw `.refused(.refused, why)`.
    public func fireTrigger(_ name: String) throws(BusClientError) {
        _ = try connection.request(.fireTrigger(name))
    }

    // MARK: Connection and mute state

    func isConnected(_ port: String) -> Bool { ownPorts.withLock { $0[port]?.connected.load(ordering: .relaxed) ?? false } }
    func isMuted(_ port: String) -> Bool { ownPorts.withLock { $0[port]?.muted.load(ordering: .relaxed) ?? false } }

    func state(of port: String) -> PortState? { ownPorts.withLock { $0[port] } }

    private func received(_ event: BusEvent) {
        switch event {
        case .connectionsChanged, .portRemoved, .portAdded:
            refresh.store(true, ordering: .relaxed)
            refresher.wake()
        case let .muteChanged(port, value): state(of: port)?.muted.store(value, ordering: .relaxed)
        case .triggerFired(let name):
            firedTriggers.withLock { $0.append(name) }
            refresher.wake()
        default: break
        }
        for handler in handlers.withLock({ $0 }) { handler(event) }
    }

    /// Requests cannot be made from the reader thread (it delivers their answers), so a small
    /// thread of its own keeps the connection state fresh after events, and calls the handlers
    /// of fired triggers (which may then set their trigger's state).
    private func startRefresher() throws(SystemCallError) {
        // Weak: the refresher must not keep the client alive; it holds the client only while
        // it works, never while it sleeps, and a client dropped without `close` stops it from
        // its deinit.
        try refresher.start { [weak self] _ in
            guard let me = self, me.running.load(ordering: .relaxed) else { return .init() }
            if me.refresh.exchange(false, ordering: .relaxed) { me.refreshConnections() }
            me.deliverFiredTriggers()
            return .init()
        }
    }

    private func refreshConnections() {
        guard let list = try? connections() else { return }
        let mutedPorts = Set(((try? ports()) ?? []).filter(\.muted).map(\.name))
        ownPorts.withLock { table in
            for (name, state) in table {
                // The list names each end PORT or PORT:CHANNEL.
                let connected = list.contains { c in [c.from, c.to].contains { (try? PortEndpoint(parsing: $0))?.port == name } }
                state.connected.store(connected, ordering: .relaxed)
                state.muted.store(mutedPorts.contains(name), ordering: .relaxed)
            }
        }
    }
}

/// What a real-time thread may read about a port without a lock.
final class PortState: Sendable {
    let connected = Atomic<Bool>(false)
    let muted = Atomic<Bool>(false)
}

/// A block's place on the codec clock, for latency compensation.
public struct FrameTimestamp: Sendable, Equatable {
    /// The frame position on the codec clock of the block's first frame.
    public var codecFrame: Int64
    /// The monotonic time of that frame, in nanoseconds.
    public var hostNanos: Int64
}
