import OrderedCollections
import StageboxPortRules
import StageboxRealtime
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the engine needs to know at start.
public struct EngineSettings: Sendable, Equatable {
    public var sampleRate: Int
    /// Frames per period: the one authority for that number. The drivers run at it, the bus
    /// tells it to its clients and plans its rings and deadlines from it, and every buffer is
    /// allocated for it. A `process` call takes at most this many frames (only the offline
    /// driver's last block is shorter).
    public var period: Int
    /// Codec capture channels (`codec.in`).
    public var inputs: Int
    /// Codec playback channels (`codec.out`).
    public var outputs: Int
    public var toneSignal: ToneSignal
    public var toneFrequency: Double
    public var toneLevelDB: Double
    /// The codec outputs' fade in and out, in ms (0: none, as for offline renders).
    public var fadeMilliseconds: Double

    public init(sampleRate: Int, period: Int, inputs: Int, outputs: Int,
                toneSignal: ToneSignal = .sine, toneFrequency: Double = 1000, toneLevelDB: Double = -20,
                fadeMilliseconds: Double = 0) {
        self.sampleRate = sampleRate
        self.period = period
        self.inputs = inputs
        self.outputs = outputs
        self.toneSignal = toneSignal
        self.toneFrequency = toneFrequency
        self.toneLevelDB = toneLevelDB
        self.fadeMilliseconds = fadeMilliseconds
    }
}

/// The bus and its graph: processes one period, codec inputs → graph → codec outputs.
///
/// Two sides. The control side (any thread, serialised by a mutex the audio thread never
/// touches) adds ports, connects, mutes, and publishes a new graph snapshot for each change.
/// The audio side (`process`) picks the newest snapshot up between periods and runs it.
public final class Engine: @unchecked Sendable {
    public let settings: EngineSettings
    /// `codec.in`: the driver writes the captured period here before `process`.
    public let captureBuffer: AudioBuffer
    /// `codec.out`: the driver reads the period to play from here after `process`.
    public let playbackBuffer: AudioBuffer
    /// The codec outputs' fade in and out (`EngineSettings.fadeMilliseconds`).
    public let outputFade: OutputFade

    private struct ControlState {
        /// By name, in the order the ports were added (listings show that order).
        var ports: OrderedDictionary<String, Port> = [:]
        var connections: [Connection] = []
    }

    private let control: Mutex<ControlState>
    /// Who hears about every change, whoever made it (see `onChange`).
    private let listeners = Mutex<[@Sendable (EngineChange) -> Void]>([])
    private let exchange: SnapshotExchange<GraphSnapshot>
    /// Set by the first period: before it, graph changes need no fades.
    private let running = Atomic<Bool>(false)
    /// Periods begun; written by the audio side only.
    private let periods = Atomic<Int>(0)
    /// The last period whose meters were measured, stored (releasing) after they were.
    private let metersMeasuredThrough = Atomic<Int>(0)
    /// The meters are measured until this period (`watchMeters`): nobody reading them, they cost nothing.
    private let metersWatchedUntil = Atomic<Int>(0)

    public init(settings: EngineSettings) {
        self.settings = settings
        let codecIn = Port(descriptor: .init(name: BuiltinPort.codecIn, title: "Codec inputs",
                                             kind: .sender, channels: settings.inputs),
                           capacity: settings.period, processor: nil)
        let codecOut = Port(descriptor: .init(name: BuiltinPort.codecOut, title: "Codec outputs",
                                              kind: .receiver, channels: settings.outputs),
                            capacity: settings.period, processor: nil)
        let tone = Port(descriptor: .init(name: BuiltinPort.tone, title: "Test tone",
                                          kind: .sender, channels: 1),
                        capacity: settings.period,
                        processor: ToneGenerator(signal: settings.toneSignal, frequency: settings.toneFrequency,
                                                 levelDB: settings.toneLevelDB, sampleRate: settings.sampleRate))
        captureBuffer = codecIn.buffer
        playbackBuffer = codecOut.buffer
        outputFade = OutputFade(milliseconds: settings.fadeMilliseconds, sampleRate: settings.sampleRate)
        let ports = [codecIn, tone, codecOut]
        control = Mutex(ControlState(ports: OrderedDictionary(uniqueKeysWithValues: ports.map { ($0.descriptor.name, $0) })))
        exchange = SnapshotExchange(initial: GraphPlanner.snapshot(ports: ports, edges: []))
    }

    // MARK: Audio side

    /// Runs one period of `frames` frames (at most `settings.period`).
    /// Real-time safe: no allocation, no lock, no system call.
    public func process(frames: Int, cycle: CycleInfo) {
        if !running.load(ordering: .relaxed) { running.store(true, ordering: .relaxed) }
        let period = periods.load(ordering: .relaxed) &+ 1
        periods.store(period, ordering: .relaxed)
        let metering = period <= metersWatchedUntil.load(ordering: .relaxed)
        let snapshot = exchange.acquire()
        snapshot._withUnsafeGuaranteedRef { $0.run(frames: frames, cycle: cycle, metering: metering) }
        if metering { metersMeasuredThrough.store(period, ordering: .releasing) }
        exchange.advance()
        outputFade.apply(to: playbackBuffer, frames: frames)
    }

    // MARK: Control side

    /// Calls `listener` after every change to the graph or a mute, whoever made it (a bus
    /// request, the console, a trigger, the configuration): the one place changes are announced.
    /// It runs on the thread that made the change, after the engine's lock is released.
    public func onChange(_ listener: @escaping @Sendable (EngineChange) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    private func announce(_ changes: [EngineChange]) {
        guard !changes.isEmpty else { return }
        let all = listeners.withLock { $0 }
        for change in changes { for listener in all { listener(change) } }
    }

    /// The ports on the bus, in creation order.
    public var ports: [PortDescriptor] {
        control.withLock { $0.ports.values.map(\.descriptor) }
    }

    /// The connections on the bus, in the order they were made.
    public var connections: [Connection] {
        control.withLock { $0.connections }
    }

    /// The port named `name`.
    private func port(_ name: String) throws(EngineError) -> Port {
        guard let port = control.withLock({ $0.ports[name] }) else { throw .noSuchPort(name) }
        return port
    }

    /// Has the meters measured for the next `seconds` (they are not while nobody reads them).
    /// When they were not, it clears the peaks they held from before and waits for a measured
    /// period: up to `settleMilliseconds`, and no longer than periods keep coming (a paused
    /// codec processes none).
    public func watchMeters(seconds: Int = 5, settleMilliseconds: Int = 250) {
        let now = periods.load(ordering: .relaxed)
        let until = now + max(1, seconds * settings.sampleRate / max(1, settings.period))
        var held = metersWatchedUntil.load(ordering: .relaxed)
        while held < until { // raised, never lowered by another reader's shorter watch
            let (done, found) = metersWatchedUntil.compareExchange(expected: held, desired: until, ordering: .relaxed)
            if done { break }
            held = found
        }
        guard held < now else { return } // watched already: what they hold is current
        for port in control.withLock({ Array($0.ports.values) }) { _ = port.meter.read() }
        let from = periods.load(ordering: .relaxed)
        let periodMilliseconds = max(1, settings.period * 1000 / max(1, settings.sampleRate))
        var seen = from, still = 0
        for _ in 0..<max(0, settleMilliseconds) {
            // Acquiring: the meter values stored before that period's release are seen.
            if metersMeasuredThrough.load(ordering: .acquiring) > from { return }
            usleep(1000)
            let current = periods.load(ordering: .relaxed)
            if current != seen { seen = current; still = 0 } else { still += 1 }
            if still > 3 * periodMilliseconds + 5 { return } // no periods: nothing will be measured
        }
    }

    /// The meter of `name`: peak and RMS per channel, measured while `watchMeters` asks for it.
    public func meter(_ name: String) throws(EngineError) -> PortMeter {
        try port(name).meter
    }

    /// Whether `name` is muted.
    public func isMuted(_ name: String) throws(EngineError) -> Bool {
        try port(name).isMuted
    }

    /// Adds a port; its processor runs on the audio thread from the next period on.
    /// The port rules apply: its name, its channel count, and no reserved owner (`codec.x`)
    /// unless the port is `stagebox`'s own (the recorder's, the player's).
    @discardableResult
    public func addPort(_ descriptor: PortDescriptor, processor: PortProcessor?,
                        ownedByStagebox: Bool = false) throws(EngineError) -> Port {
        do throws(PortRuleViolation) {
            try PortRules.checkPortName(descriptor.name)
            if !ownedByStagebox || !descriptor.name.hasPrefix("stagebox.") { try PortRules.checkOwner(of: descriptor.name) }
            try PortRules.checkChannels(descriptor.channels, port: descriptor.name)
        } catch {
            throw .portRule(error)
        }
        let port = Port(descriptor: descriptor, capacity: settings.period, processor: processor)
        try change { state throws(EngineError) in
            if state.ports[descriptor.name] != nil { throw .portExists(descriptor.name) }
            state.ports[descriptor.name] = port
        }
        announce([.portAdded(descriptor.name)])
        return port
    }

    /// Removes a port and every connection to or from it (they fade out over one period).
    public func removePort(_ name: String) throws(EngineError) {
        if [BuiltinPort.codecIn, BuiltinPort.codecOut, BuiltinPort.tone].contains(name) {
            throw .builtinPort(name)
        }
        var hadConnections = false
        try change { state throws(EngineError) in
            guard state.ports.removeValue(forKey: name) != nil else { throw .noSuchPort(name) }
            hadConnections = state.connections.contains { $0.from == name || $0.to == name }
            state.connections.removeAll { $0.from == name || $0.to == name }
        }
        announce([.portRemoved(name)] + (hadConnections ? [.connectionsChanged] : []))
    }

    /// Connects a sender or filter to a filter or receiver: `from` and `to` are `PORT` or
    /// `PORT:CHANNEL` (see `Connection`).
    public func connect(from: String, to: String) throws(EngineError) {
        try connect(Self.parse(from, to))
    }

    /// Makes `connection`. A whole-port connection and channel connections between the same two
    /// ports are distinct (each is listed, and disconnected, on its own), but no two of them may
    /// carry the same source channel into the same destination channel: that would mix it in twice.
    public func connect(_ connection: Connection) throws(EngineError) {
        try change { state throws(EngineError) in
            let route = try Self.route(connection, in: state.ports)
            if state.connections.contains(connection) {
                throw .alreadyConnected(from: connection.source.description, to: connection.destination.description)
            }
            let pairs = route.pairs
            for other in state.connections where other.from == connection.from && other.to == connection.to {
                if let otherRoute = try? Self.route(other, in: state.ports), !otherRoute.pairs.isDisjoint(with: pairs) {
                    throw .overlaps(connection, existing: other)
                }
            }
            let all = state.connections + [connection]
            if GraphPlanner.processingOrder(ports: state.ports.values.elements, edges: all) == nil {
                throw .cycle(from: connection.from, to: connection.to)
            }
            state.connections = all
        }
        announce([.connectionsChanged])
    }

    /// Removes a connection (it fades out over one period); `from` and `to` as for `connect`.
    public func disconnect(from: String, to: String) throws(EngineError) {
        try disconnect(Self.parse(from, to))
    }

    /// Removes exactly `connection`: disconnecting whole ports leaves their channel connections.
    public func disconnect(_ connection: Connection) throws(EngineError) {
        try change { state throws(EngineError) in
            guard let index = state.connections.firstIndex(of: connection) else {
                if state.ports[connection.from] == nil { throw .noSuchPort(connection.from) }
                if state.ports[connection.to] == nil { throw .noSuchPort(connection.to) }
                throw .notConnected(from: connection.source.description, to: connection.destination.description)
            }
            state.connections.remove(at: index)
        }
        announce([.connectionsChanged])
    }

    /// Mutes or unmutes a port: its output becomes silence (faded over one period).
    public func setMuted(_ name: String, _ muted: Bool) throws(EngineError) {
        let port = try port(name)
        if port.muted.exchange(muted, ordering: .relaxed) != muted { announce([.muteChanged(port: name, muted: muted)]) }
    }

    /// Releases graph snapshots (and with them removed ports and their processors) that the
    /// audio thread has finished with. Call it now and then from a control thread.
    public func collect() {
        control.withLock { _ in exchange.collect() }
    }

    private static func parse(_ from: String, _ to: String) throws(EngineError) -> Connection {
        do throws(PortRuleViolation) {
            return Connection(try PortEndpoint(parsing: from), try PortEndpoint(parsing: to))
        } catch {
            throw .portRule(error)
        }
    }

    /// The channels `c` carries, or why it cannot be made among `ports`.
    private static func route(_ c: Connection, in ports: OrderedDictionary<String, Port>) throws(EngineError) -> ChannelRoute {
        guard let f = ports[c.from]?.descriptor else { throw .noSuchPort(c.from) }
        guard let t = ports[c.to]?.descriptor else { throw .noSuchPort(c.to) }
        guard f.kind != .receiver, t.kind != .sender else {
            throw .wrongDirection(from: f.name, fromKind: f.kind, to: t.name, toKind: t.kind)
        }
        for (port, channel) in [(f, c.fromChannel), (t, c.toChannel)] {
            if let channel, !(1...port.channels).contains(channel) {
                throw .noSuchChannel(port: port.name, channel: channel, channels: port.channels)
            }
        }
        guard let route = ChannelRoute(source: f, channel: c.fromChannel, destination: t, channel: c.toChannel) else {
            throw .channelMismatch(from: f.name, fromChannels: f.channels, to: t.name, toChannels: t.channels)
        }
        return route
    }

    /// Applies `body` to the control state and publishes the resulting graph.
    private func change(_ body: (inout ControlState) throws(EngineError) -> Void) throws(EngineError) {
        try control.withLock { state throws(EngineError) in
            var next = state
            try body(&next)
            state = next
            let fade = running.load(ordering: .relaxed)
            // Fade from what the audio thread plays, not from the last published graph: under
            // load several changes can come between two periods.
            exchange.publish { playing in
                fade ? GraphPlanner.transition(oldPorts: playing.ports, oldEdges: playing.edges,
                                               newPorts: next.ports.values.elements, newEdges: next.connections)
                     : GraphPlanner.snapshot(ports: next.ports.values.elements, edges: next.connections)
            }
        }
    }
}

/// A change to the bus, as the engine announces it.
public enum EngineChange: Sendable, Equatable {
    case portAdded(String)
    case portRemoved(String)
    case connectionsChanged
    case muteChanged(port: String, muted: Bool)
}
