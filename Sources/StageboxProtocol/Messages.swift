import StageboxTriggers
/// The bus protocol's version; a client speaking another is refused at hello.
public let busProtocolVersion: UInt16 = 4

/// The largest frame either side accepts.
public let maximumFrameSize = 64 * 1024

public enum WireKind: UInt8, Sendable, CaseIterable {
    case sender = 0, filter = 1, receiver = 2
}

public enum WireFormat: UInt8, Sendable, CaseIterable {
    case int16 = 1, float32 = 2
}

/// How a receiver gets its sources.
public enum ReceiverMode: UInt8, Sendable, CaseIterable {
    /// One stream: the mix of everything connected.
    case mixed = 0
    /// One stream per source.
    case separate = 1
}

/// What a client asks for when it creates a port.
public struct PortRequest: Sendable, Equatable {
    /// The port's own name; on the bus it becomes `client.name`.
    public var name: String
    public var title: String
    public var kind: WireKind
    public var channels: Int
    public var format: WireFormat
    /// The client's sample rate (the bus converts).
    public var sampleRate: Int
    public var receiverMode: ReceiverMode

    public init(name: String, title: String, kind: WireKind, channels: Int, format: WireFormat = .float32,
                sampleRate: Int, receiverMode: ReceiverMode = .mixed) {
        self.name = name
        self.title = title
        self.kind = kind
        self.channels = channels
        self.format = format
        self.sampleRate = sampleRate
        self.receiverMode = receiverMode
    }
}

/// A port as the bus describes it to clients.
public struct PortInfo: Sendable, Equatable {
    public var name: String
    public var title: String
    public var kind: WireKind
    public var channels: Int
    public var muted: Bool
    /// The client that owns it, or `stagebox` for built-in ports.
    public var owner: String

    public init(name: String, title: String, kind: WireKind, channels: Int, muted: Bool, owner: String) {
        self.name = name
        self.title = title
        self.kind = kind
        self.channels = channels
        self.muted = muted
        self.owner = owner
    }
}

/// Something that happened on the bus, pushed to every client (`triggerFired` only to the
/// trigger's owner).
public enum BusEvent: Sendable, Equatable {
    case connectionsChanged
    case portAdded(String)
    case portRemoved(String)
    case muteChanged(port: String, muted: Bool)
    case triggerChanged(name: String, state: UInt8)
    case serverStopping
    /// The codec's lifecycle moved: `state` is `running`, `suspended`, … (`LifecycleState`'s
    /// raw values), `reason` says why.
    case lifecycleChanged(state: String, reason: String)
    /// A client made a trigger (`client.trigger`), with its title and state.
    case triggerAdded(name: String, title: String, state: UInt8)
    /// A trigger left (its client removed it, or left the bus).
    case triggerRemoved(String)
    /// The client's own trigger was fired (by a button, the console, a client or the command
    /// line); sent to its owner only, which sets the new state with `setTriggerState`.
    case triggerFired(String)
}

/// Why the server refused a request.
public enum BusErrorCode: UInt16, Sendable {
    case badRequest = 1
    case noSuchPort = 2
    case exists = 3
    case refused = 4
    case limit = 5
    case versionMismatch = 6
    case notReady = 7
    case noSuchTrigger = 8
    /// The trigger is disabled: firing it did nothing.
    case triggerDisabled = 9
    /// The trigger belongs to stagebox or to another client.
    case notOwner = 10
}

/// Client → server.
public enum ClientMessage: Sendable, Equatable {
    case hello(clientName: String, version: UInt16)
    case createPort(PortRequest)
    case removePort(String)
    case listPorts
    case listConnections
    case connect(from: String, to: String)
    case disconnect(from: String, to: String)
    case setMuted(port: String, muted: Bool)
    case fireTrigger(String)
    /// Makes the trigger `client.name`; `state` is a `TriggerState` raw value (checked by the server).
    case createTrigger(name: String, title: String, state: UInt8)
    /// Sets the state of one of the client's triggers: its own name or `client.name`.
    case setTriggerState(name: String, state: UInt8)
    /// Removes one of the client's triggers: its own name or `client.name`.
    case removeTrigger(String)
    /// A console command line; answered with `.consoleAnswer`.
    case consoleLine(String)
    /// What Tab would complete at the end of this console line; answered with `.completions`.
    case consoleComplete(String)
}

/// Server → client.
public enum ServerMessage: Sendable, Equatable {
    case welcome(serverVersion: String, sampleRate: Int, period: Int, clientName: String)
    /// Comes with the port's shared-memory file and its wakeup eventfds.
    case portCreated(PortInfo, ringFrames: Int)
    case ok
    case error(BusErrorCode, String)
    case ports([PortInfo])
    case connections([(from: String, to: String)])
    case event(BusEvent)
    /// A console line's answer, and whether the command failed.
    case consoleAnswer(String, failed: Bool)
    case completions([String])

    public static func == (a: ServerMessage, b: ServerMessage) -> Bool {
        switch (a, b) {
        case let (.connections(x), .connections(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.from == $1.from && $0.to == $1.to }
        case let (.welcome(a1, a2, a3, a4), .welcome(b1, b2, b3, b4)): return a1 == b1 && a2 == b2 && a3 == b3 && a4 == b4
        case let (.portCreated(p, r), .portCreated(q, s)): return p == q && r == s
        case (.ok, .ok): return true
        case let (.error(c, m), .error(d, n)): return c == d && m == n
        case let (.ports(x), .ports(y)): return x == y
        case let (.event(x), .event(y)): return x == y
        case let (.consoleAnswer(x, f), .consoleAnswer(y, g)): return x == y && f == g
        case let (.completions(x), .completions(y)): return x == y
        default: return false
        }
    }
}
