import StageboxEngine
import StageboxControls
import StageboxTriggers
import StageboxDrivers

/// One xrun, late wakeup or poll timeout, as the console lists it.
public struct XrunRecord: Sendable, Equatable {
    public var timeNanos: Int64
    public var kind: String
    public var durationNanos: Int64
    /// What the board was like then (an xrun's: health, the recorder's ring); empty if unknown.
    public var context: String

    public init(timeNanos: Int64, kind: String, durationNanos: Int64, context: String = "") {
        self.timeNanos = timeNanos
        self.kind = kind
        self.durationNanos = durationNanos
        self.context = context
    }
}

/// A client program on the bus, as the console lists it.
public struct ClientSummary: Sendable, Equatable {
    public struct PortLine: Sendable, Equatable {
        public var name: String
        public var rate: Int
        public var underruns: Int
        public var overruns: Int
        public var fill: Int
        /// The fill level the client's drift correction holds (0: it does not say).
        public var target: Int
        /// The client's conversion ratio (nil: its shared memory holds no sensible one).
        public var ratio: Double?
        public init(name: String, rate: Int, underruns: Int, overruns: Int, fill: Int, target: Int = 0, ratio: Double? = 1) {
            self.name = name
            self.rate = rate
            self.underruns = underruns
            self.overruns = overruns
            self.fill = fill
            self.target = target
            self.ratio = ratio
        }
    }

    public var name: String
    public var pid: Int32
    public var ports: [PortLine]

    public init(name: String, pid: Int32, ports: [PortLine]) {
        self.name = name
        self.pid = pid
        self.ports = ports
    }
}

/// What the console shows and changes: the running appliance, seen from outside the audio thread.
public protocol ConsoleContext: Sendable {
    var version: String { get }
    /// Monotonic nanoseconds when stagebox started.
    var startedAt: Int64 { get }
    /// `running`, `suspended`, … (the lifecycle's state).
    var lifecycleState: String { get }
    /// What the codec is: ALSA device names, `simulated`, `offline`.
    var driver: String { get }
    var sampleRate: Int { get }
    var format: String { get }
    var period: Int { get }
    var periods: Int { get }
    var statistics: AudioStatistics { get }
    var engine: Engine { get }
    var triggers: TriggerBoard { get }
    var clients: [ClientSummary] { get }
    /// The most recent xruns, oldest first.
    var xruns: [XrunRecord] { get }
    /// The last `count` lines of stagebox's own log.
    func log(last count: Int) -> [String]
    /// The effective configuration, where it came from, and its problems, as lines.
    var configuration: [String] { get }
    /// The watchdog's state, once there is one.
    var watchdog: String? { get }
    /// Forgets the xrun history (statistics are reset by the console itself).
    func clearXruns()
    /// Clients disconnected because their shared memory was found corrupt.
    var ringFaults: Int { get }
    /// Suspends the codec; nil when it will, else why it is refused (in use, not running).
    func suspend() -> String?
    /// Brings a suspended codec back; says what happens.
    func resume() -> String
    /// The last lifecycle changes, oldest first, one line each.
    var lifecycleChanges: [String] { get }
    /// `record start` or `record stop`: what happened, or "refused: " and why.
    func record(start: Bool) -> String
    /// The last takes, one line each: file, length, size, any repair.
    var takes: [String] { get }
    /// The recorder's line for `status` (the take's time and size, the free space), or nil.
    var recorderStatus: String? { get }
    /// `storage`: the media takes go to, with free space and recording time left.
    var storage: [String] { get }
    /// `storage eject NAME`: unmounts a stick so it can be pulled; says so, or why not.
    func eject(_ name: String) -> String
    /// `takes copy [usb|NAME|DIR] [--force]`: starts copying takes onto a stick; `takes copy
    /// status`: how far it is (arguments: what followed `copy`).
    func copyTakes(_ arguments: [String]) -> String
    /// The configured buttons with their debounced levels.
    var buttons: [ButtonWatcher.Status] { get }
    /// MIDI's line for `status` (peers and counters); nil without `[midi]`.
    var midiStatus: String? { get }
    /// The answer of `midi`: the client, its peers, the counters; nil without `[midi]`.
    var midi: [String]? { get }
    /// `state show`, `state save` or `state clear` (action is one of those words).
    func state(_ action: String) -> String
    /// `update`: where updates stand; `update FILE [--force]`: install a bundle; `update
    /// --rollback`: boot the other slot. Answers at once; the install runs on its own thread.
    func update(_ arguments: [String]) -> String
    /// The line for `status`: the running slot, its version, whether it is marked good; nil
    /// where the system has no update engine.
    var updateStatus: String? { get }
    /// The line for `status`: the latest health reading; nil without the health thread.
    var healthStatus: String? { get }
    /// `health`: the latest reading and the changes since start; nil without the health thread.
    var health: [String]? { get }
    /// The slate of the next take: `slate` shows it; `scene NAME`, `take N`, `tape NAME`,
    /// `project NAME`, `note TEXT` set a field (words: the command, then its value).
    func slate(_ words: [String]) -> String
    /// `diag bundle [DIR]`: writes the console's `sections` with the system's own report into
    /// one file in `directory` (nil: the configuration file's folder); says where, or why not.
    func writeSupportBundle(_ sections: [(title: String, lines: [String])], into directory: String?) -> String
}

extension ConsoleContext {
    public var ringFaults: Int { 0 }
    public func suspend() -> String? { "refused: this stagebox has no lifecycle" }
    public func resume() -> String { "this stagebox has no lifecycle" }
    public var lifecycleChanges: [String] { [] }
    public func record(start: Bool) -> String { "refused: this stagebox has no recorder" }
    public var takes: [String] { [] }
    public var recorderStatus: String? { nil }
    public var storage: [String] { [] }
    public func eject(_ name: String) -> String { "refused: this stagebox mounts no sticks" }
    public func copyTakes(_ arguments: [String]) -> String { "refused: this stagebox has no recorder" }
    public var buttons: [ButtonWatcher.Status] { [] }
    public var midiStatus: String? { nil }
    public var midi: [String]? { nil }
    public func state(_ action: String) -> String {
        let why = "no [state] in the configuration: nothing is kept across restarts"
        return action == "show" ? why : "refused: \(why)"
    }
    public func update(_ arguments: [String]) -> String { "refused: this stagebox cannot update itself" }
    public var updateStatus: String? { nil }
    public var healthStatus: String? { nil }
    public var health: [String]? { nil }
    public func slate(_ words: [String]) -> String { "refused: this stagebox has no recorder" }
    public func writeSupportBundle(_ sections: [(title: String, lines: [String])], into directory: String?) -> String {
        "refused: this stagebox cannot write a support bundle"
    }
}
