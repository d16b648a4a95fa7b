import DequeModule
import StageboxDrivers

/// The lifecycle's one owner: from what it observes each tick (what uses the bus, where the
/// driver is, whether frames move, whether the outputs have faded out) it moves the state and
/// says what the driver and the fade must do. Pure logic: no threads, no clock of its own.
///
/// The rule it keeps: never suspended while in use. Anything in use while suspending or
/// suspended turns the codec back on in the same observation; `healthy` (what the watchdog
/// is fed on) is false whenever that rule or progress fails.
public struct LifecycleMachine: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Seconds not in use before a suspend; 0 = never.
        public var suspendAfter: Double
        /// The fade's length, in seconds.
        public var fadeSeconds: Double
        /// After a resume, the codec runs at least this long before it may suspend again (a
        /// client that makes and removes ports in a loop cannot make it flap).
        public var minimumRun: Double
        /// How long starting or resuming may take before the watchdog is no longer fed.
        public var startGrace: Double
        /// How long running may go without a frame processed before the watchdog is no longer fed.
        public var progressTimeout: Double
        /// How long clients may wait for a codec that cannot be opened before the watchdog is
        /// no longer fed (and the board resets, which may bring the codec back).
        public var codecWaitGrace: Double

        public init(suspendAfter: Double = 0, fadeSeconds: Double = 0.02, minimumRun: Double = 5,
                    startGrace: Double = 10, progressTimeout: Double = 2, codecWaitGrace: Double = 60) {
            self.suspendAfter = suspendAfter
            self.fadeSeconds = fadeSeconds
            self.minimumRun = minimumRun
            self.startGrace = startGrace
            self.progressTimeout = progressTimeout
            self.codecWaitGrace = codecWaitGrace
        }
    }

    /// What the owner sees at one moment.
    public struct Observation: Sendable, Equatable {
        public var use: BusUse
        public var driver: DriverState
        public var framesProcessed: Int
        /// The outputs' fade-out has reached silence.
        public var outputsSilent: Bool

        public init(use: BusUse, driver: DriverState, framesProcessed: Int, outputsSilent: Bool) {
            self.use = use
            self.driver = driver
            self.framesProcessed = framesProcessed
            self.outputsSilent = outputsSilent
        }
    }

    /// What the owner must do after an observation.
    public enum Command: Sendable, Equatable {
        case fadeOut, fadeIn, pauseDriver, resumeDriver, stopDriver
    }

    /// One change of state, for the log, the console and the clients.
    public struct Change: Sendable, Equatable {
        public var time: Double
        public var from: LifecycleState
        public var to: LifecycleState
        public var reason: String
    }

    public let settings: Settings
    public private(set) var state: LifecycleState = .starting
    public private(set) var enteredAt: Double
    /// The last changes, oldest first (at most `historyLength`).
    public var changes: [Change] { Array(history) }
    private var history: Deque<Change> = []
    public let historyLength = 32
    /// Changes since the start (the history keeps only the last ones).
    public private(set) var changeCount = 0
    public private(set) var use = BusUse()
    private var idleSince: Double?
    private var lastFrames = 0
    /// The frames processed when the state was entered: progress is counted from there.
    private var framesAtEntry = 0
    private var lastProgressAt: Double
    private var pauseSent = false
    /// When the codec last came back from a suspend.
    private var resumedAt: Double?
    private var resumeAsked = false
    private var suspendAsked = false
    private var stopAsked = false

    public init(settings: Settings, at now: Double) {
        self.settings = settings
        enteredAt = now
        lastProgressAt = now
        idleSince = now
    }

    /// Moves the state for what is seen at `now`; returns what to do, in order.
    public mutating func observe(_ o: Observation, at now: Double) -> [Command] {
        if o.framesProcessed != lastFrames {
            lastFrames = o.framesProcessed
            lastProgressAt = now
        }
        use = o.use
        if o.use.inUse { idleSince = nil } else if idleSince == nil { idleSince = now }
        if stopAsked && state != .stopping {
            move(to: .stopping, at: now, "stop requested")
            return [.fadeOut]
        }
        switch state {
        case .starting, .resuming, .waitingForCodec:
            if o.driver == .waitingForDevice {
                if state != .waitingForCodec { move(to: .waitingForCodec, at: now, "the codec cannot be opened") }
            } else if o.driver == .running && o.framesProcessed > framesAtEntry {
                if state == .resuming { resumedAt = now }
                move(to: .running, at: now, o.use.description)
            }
            return []
        case .running:
            if o.driver == .waitingForDevice {
                move(to: .waitingForCodec, at: now, "the codec went away")
                return []
            }
            let asked = suspendAsked
            suspendAsked = false
            guard !o.use.inUse else { return [] }
            if asked {
                move(to: .suspending, at: now, "suspend asked for")
                return [.fadeOut]
            }
            if settings.suspendAfter > 0, let idle = idleSince, now - idle >= settings.suspendAfter,
               now - (resumedAt ?? -.infinity) >= settings.minimumRun {
                move(to: .suspending, at: now, "not in use for \(Int(now - idle)) s")
                return [.fadeOut]
            }
            return []
        case .suspending:
            if o.use.inUse || resumeAsked {
                let why = resumeAsked ? "resume asked for" : "in use again: \(o.use.description)"
                resumeAsked = false
                if pauseSent {
                    pauseSent = false
                    move(to: .resuming, at: now, why)
                    // The fade-in too: a resume that comes before the audio thread saw the pause
                    // leaves the loop running, faded out (a reopen fades in from silence anyway).
                    return [.resumeDriver, .fadeIn]
                }
                resumedAt = now
                move(to: .running, at: now, why)
                return [.fadeIn]
            }
            if o.driver == .paused || o.driver == .stopped {
                pauseSent = false
                move(to: .suspended, at: now, "codec closed")
                return []
            }
            if !pauseSent && (o.outputsSilent || now - enteredAt > settings.fadeSeconds + 0.5) {
                pauseSent = true
                return [.pauseDriver]
            }
            return []
        case .suspended:
            if o.use.inUse || resumeAsked {
                let why = resumeAsked ? "resume asked for" : o.use.description
                resumeAsked = false
                move(to: .resuming, at: now, why)
                return [.resumeDriver]
            }
            return []
        case .stopping:
            if o.outputsSilent || now - enteredAt > settings.fadeSeconds + 0.5 { return [.stopDriver] }
            return []
        }
    }

    /// The console's `suspend`: nil when it will happen, else why it is refused (in use, or
    /// not running).
    public mutating func requestSuspend() -> LifecycleRefusal? {
        if use.inUse { return .inUse(use) }
        guard state == .running else { return .notRunning(state) }
        suspendAsked = true
        return nil
    }

    /// The console's `resume`, a trigger fired, a take starting: brings the codec back.
    public mutating func requestResume() {
        if state == .suspended || state == .suspending { resumeAsked = true }
    }

    /// A clean stop: fade out, then stop the driver.
    public mutating func requestStop() { stopAsked = true }

    /// Whether the watchdog may be fed: running with frames moving, suspended with nothing in
    /// use, or starting, resuming, suspending or waiting for less than their bounded time.
    public func healthy(at now: Double) -> Bool {
        let inState = now - enteredAt
        switch state {
        case .running: return now - lastProgressAt < settings.progressTimeout
        case .starting, .resuming: return inState < settings.startGrace
        case .suspending: return inState < settings.fadeSeconds + settings.startGrace
        case .suspended: return !use.inUse
        case .waitingForCodec: return !use.inUse || inState < settings.codecWaitGrace
        case .stopping: return true
        }
    }

    /// The state and why, for `status`: "suspended: not in use for 62 s".
    public func summary(at now: Double) -> String {
        switch state {
        case .running:
            let idle = idleSince.map { now - $0 } ?? 0
            if use.inUse || settings.suspendAfter == 0 { return "running: \(use.description)" }
            return "running: not in use for \(Int(idle)) s (suspends after \(Int(settings.suspendAfter)) s)"
        case .suspended:
            return "suspended: not in use for \(Int(idleSince.map { now - $0 } ?? 0)) s"
        default:
            return "\(state.rawValue): \(history.last?.reason ?? "")"
        }
    }

    private mutating func move(to next: LifecycleState, at now: Double, _ reason: String) {
        history.append(Change(time: now, from: state, to: next, reason: reason))
        changeCount += 1
        if history.count > historyLength { history.removeFirst(history.count - historyLength) }
        state = next
        enteredAt = now
        framesAtEntry = lastFrames
    }
}

/// Why the console's `suspend` was refused.
public enum LifecycleRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case inUse(BusUse)
    case notRunning(LifecycleState)

    public var description: String {
        switch self {
        case let .inUse(use): return "refused: the bus is in use (\(use.description)); it suspends only when nothing is"
        case let .notRunning(state): return "refused: the codec is \(state.rawValue), not running"
        }
    }
}
