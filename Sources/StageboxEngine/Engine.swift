import StageboxRealtime
import Synchronization

/// What the engine needs to know at start.
public struct EngineSettings: Sendable, Equatable {
    public var sampleRate: Int
    /// The largest number of frames one period may have; buffers are allocated for it.
    public var maxFrames: Int
    /// Codec capture channels (`codec.in`).
    public var inputs: Int
    /// Codec playback channels (`codec.out`).
    public var outputs: Int
    public var toneSignal: ToneSignal
    public var toneFrequency: Double
    public var toneLevelDB: Double

    public init(sampleRate: Int, maxFrames: Int, inputs: Int, outputs: Int,
                toneSignal: ToneSignal = .sine, toneFrequency: Double = 1000, toneLevelDB: Double = -20) {
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        self.inputs = inputs
        self.outputs = outputs
        self.toneSignal = toneSignal
        self.toneFrequency = toneFrequency
        self.toneLevelDB = toneLevelDB
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

    private struct ControlState {
        var ports: [Port] = []
        var connections: [Connection] = []
    }

    private let control: Mutex<ControlState>
    /// Who hears about every change, whoever made it (see `onChange`).
    private let listeners = Mutex<[@Sendable (EngineChange) -> Void]>([])
    private let exchange: SnapshotExchange<GraphSnapshot>
    /// Set by the first period: before it, graph changes need no fades.
    private let running = Atomic<Bool>(false)

    public init(settings: EngineSettings) {
        self.settings = settings
        let codecIn = Port(descriptor: .init(name: BuiltinPort.codecIn, title: "Codec inputs",
                                             kind: .sender, channels: settings.inputs),
                           capacity: settings.maxFrames, processor: nil)
        let codecOut = Port(descriptor: .init(name: BuiltinPort.codecOut, title: "Codec outputs",
                                              kind: .receiver, channels: settings.outputs),
                            capacity: settings.maxFrames, processor: nil)
        let tone = Port(descriptor: .init(name: BuiltinPort.tone, title: "Test tone",
                                          kind: .sender, channels: 1),
                        capacity: settings.maxFrames,
                        processor: ToneGenerator(signal: settings.toneSignal, frequency: settings.toneFrequency,
                                                 levelDB: settings.toneLevelDB, sampleRate: settings.sampleRate))
        captureBuffer = codecIn.buffer
        playbackBuffer = codecOut.buffer
        let ports = [codecIn, tone, codecOut]
        control = Mutex(ControlState(ports: ports))
        exchange = SnapshotExchange(initial: GraphPlanner.snapshot(ports: ports, edges: []))
    }

    // MARK: Audio side

    /// Runs one period of `frames` frames (at most `settings.maxFrames`).
    /// Real-time safe: no allocation, no lock, no system call.
    public func process(frames: Int, cycle: CycleInfo) {
        if !running.load(ordering: .relaxed) { running.store(true, ordering: .relaxed) }
        let snapshot = exchange.acquire()
        snapshot._withUnsafeGuaranteedRef { $0.run(frames: frames, cycle: cycle) }
        exchange.advance()
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
        control.withLock { $0.ports.map(\.descriptor) }
    }

    /// The connections on the bus, in the order they were made.
    public var connections: [Connection] {
        control.withLock { $0.connections }
    }

    /// The meter of `name`: peak and RMS per channel.
    public func meter(_ name: String) throws(EngineError) -> PortMeter {
        let port = control.withLock { state in state.ports.first { $0.descriptor.name == name } }
        guard let port else { throw .noSuchPort(name) }
        return port.meter
    }

    /// Whether `name` is muted.
    public func isMuted(_ name: String) throws(EngineError) -> Bool {
        let port = control.withLock { state in state.ports.first { $0.descriptor.name == name } }
        guard let port else { throw .noSuchPort(name) }
        return port.isMuted
    }

    /// Adds a port; its processor runs on the audio thread from the next period on.
    @discardableResult
    public func addPort(_ descriptor: PortDescriptor, processor: PortProcessor?) throws(EngineError) -> Port {
        guard Self.isValidName(descriptor.name) else { throw .invalidPortName(descriptor.name) }
        guard (1...32).contains(descriptor.channels) else {
            throw .tooManyChannels(descriptor.name, descriptor.channels)
        }
        let port = Port(descriptor: descriptor, capacity: settings.maxFrames, processor: processor)
        try change { state throws(EngineError) in
            if state.ports.contains(where: { $0.descriptor.name == descriptor.name }) {
                throw .portExists(descriptor.name)
            }
            state.ports.append(port)
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
            guard let index = state.ports.firstIndex(where: { $0.descriptor.name == name }) else {
                throw .noSuchPort(name)
            }
            state.ports.remove(at: index)
            hadConnections = state.connections.contains { $0.from == name || $0.to == name }
            state.connections.removeAll { $0.from == name || $0.to == name }
        }
        announce([.portRemoved(name)] + (hadConnections ? [.connectionsChanged] : []))
    }

    /// Connects a sender or filter to a filter or receiver.
    public func connect(from: String, to: String) throws(EngineError) {
        try change { state throws(EngineError) in
            try Self.validate(Connection(from: from, to: to), in: state.ports)
            let connection = Connection(from: from, to: to)
            if state.connections.contains(connection) { throw .alreadyConnected(from: from, to: to) }
            let all = state.connections + [connection]
            if GraphPlanner.processingOrder(ports: state.ports, edges: all) == nil {
                throw .cycle(from: from, to: to)
            }
            state.connections = all
        }
        announce([.connectionsChanged])
    }

    /// Removes a connection (it fades out over one period).
    public func disconnect(from: String, to: String) throws(EngineError) {
        try change { state throws(EngineError) in
            guard let index = state.connections.firstIndex(of: Connection(from: from, to: to)) else {
                if !state.ports.contains(where: { $0.descriptor.name == from }) { throw .noSuchPort(from) }
                if !state.ports.contains(where: { $0.descriptor.name == to }) { throw .noSuchPort(to) }
                throw .notConnected(from: from, to: to)
            }
            state.connections.remove(at: index)
        }
        announce([.connectionsChanged])
    }

    /// Mutes or unmutes a port: its output becomes silence (faded over one period).
    public func setMuted(_ name: String, _ muted: Bool) throws(EngineError) {
        let port = control.withLock { state in state.ports.first { $0.descriptor.name == name } }
        guard let port else { throw .noSuchPort(name) }
        if port.muted.exchange(muted, ordering: .relaxed) != muted { announce([.muteChanged(port: name, muted: muted)]) }
    }

    /// Releases graph snapshots (and with them removed ports and their processors) that the
    /// audio thread has finished with. Call it now and then from a control thread.
    public func collect() {
        control.withLock { _ in exchange.collect() }
    }

    private static func validate(_ c: Connection, in ports: [Port]) throws(EngineError) {
        guard let from = ports.first(where: { $0.descriptor.name == c.from }) else { throw .noSuchPort(c.from) }
        guard let to = ports.first(where: { $0.descriptor.name == c.to }) else { throw .noSuchPort(c.to) }
        let f = from.descriptor, t = to.descriptor
        guard f.kind != .receiver, t.kind != .sender else {
            throw .wrongDirection(from: f.name, fromKind: f.kind, to: t.name, toKind: t.kind)
        }
        guard ChannelMapping.between(source: f.channels, destination: t.channels) != nil else {
            throw .channelMismatch(from: f.name, fromChannels: f.channels, to: t.name, toChannels: t.channels)
        }
    }

    /// Port names: letters, digits, `.`, `_`, `-`; 1 to 64 characters.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2E || b == 0x5F || b == 0x2D
        }
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
                                               newPorts: next.ports, newEdges: next.connections)
                     : GraphPlanner.snapshot(ports: next.ports, edges: next.connections)
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
