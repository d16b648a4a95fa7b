import StageboxDrivers
import StageboxEngine
import Synchronization
import StageboxSystem

/// Carries the lifecycle out: the control thread's `tick` shows the machine what uses the bus
/// and where the driver is, and applies what it says to the driver (pause, resume, stop) and
/// to the outputs' fade. The console's `suspend` and `resume` and a clean stop come here too.
public final class LifecycleController: Sendable {
    private struct Owned {
        var machine: LifecycleMachine
        /// `machine.changeCount` when changes were last announced.
        var announced = 0
    }
    private let owned: Mutex<Owned>
    private let control: DriverControl
    private let fade: OutputFade
    /// Told of every change of state, on the thread that ticks (log, clients, systemd).
    private let announce: @Sendable (LifecycleMachine.Change) -> Void

    public init(settings: LifecycleMachine.Settings, control: DriverControl, fade: OutputFade,
                announce: @escaping @Sendable (LifecycleMachine.Change) -> Void) {
        owned = Mutex(Owned(machine: LifecycleMachine(settings: settings, at: Self.now)))
        self.control = control
        self.fade = fade
        self.announce = announce
    }

    /// Seconds on the monotonic clock.
    public static var now: Double { Double(monotonicNanoseconds()) / 1e9 }

    /// Control thread, every tick (50 ms busy, a second idle, or when woken): moves the lifecycle for what uses the bus now, and
    /// returns whether it is healthy (whether the watchdog may be fed).
    @discardableResult
    public func tick(use: BusUse, now: Double = LifecycleController.now) -> Bool {
        let observation = LifecycleMachine.Observation(
            use: use, driver: control.state.load(ordering: .relaxed),
            framesProcessed: control.framesProcessed.load(ordering: .relaxed), outputsSilent: fade.isSilent)
        let (commands, changes, healthy) = owned.withLock { o in
            let commands = o.machine.observe(observation, at: now)
            let fresh = min(o.machine.changeCount - o.announced, o.machine.changes.count)
            o.announced = o.machine.changeCount
            return (commands, Array(o.machine.changes.suffix(fresh)), o.machine.healthy(at: now))
        }
        for command in commands {
            switch command {
            case .fadeOut: fade.fadeOut()
            case .fadeIn: fade.fadeIn()
            case .pauseDriver: control.requestPause()
            case .resumeDriver: control.requestResume()
            case .stopDriver: control.requestStop()
            }
        }
        for change in changes { announce(change) }
        return healthy
    }

    public var state: LifecycleState { owned.withLock { $0.machine.state } }
    public func summary(now: Double = LifecycleController.now) -> String { owned.withLock { $0.machine.summary(at: now) } }
    public var changes: [LifecycleMachine.Change] { owned.withLock { $0.machine.changes } }

    /// The console's `suspend`.
    public func suspend() -> LifecycleRefusal? {
        defer { control.wakeControl() } // the tick acts on it
        return owned.withLock { $0.machine.requestSuspend() }
    }
    /// The console's `resume`, a trigger, a take.
    public func resume() {
        owned.withLock { $0.machine.requestResume() }
        control.wakeControl()
    }
    /// A clean stop: the outputs fade out before the streams close.
    public func stop() {
        owned.withLock { $0.machine.requestStop() }
        control.wakeControl()
    }
}
