import StageboxFormatting
import Synchronization
import StageboxSystem

/// Feeds the hardware watchdog, and systemd's when there is one, only while the lifecycle is
/// healthy: the control thread calls `tick` with what `LifecycleMachine.healthy` says (frames
/// moving, or suspended with nothing in use, …). A loop that hangs, a resume that never ends
/// or a stagebox that dies stops the feeding, and the board resets when the timeout runs out.
public final class WatchdogFeeder: @unchecked Sendable {
    private let hardware: Watchdog?
    private let systemd: SystemdNotifier?
    private let timeoutSeconds: Int?
    /// How often it feeds: the control thread's idle tick must come at least this often.
    public let intervalNanos: Int64
    private var lastCheckNanos: Int64 = 0
    private let lastFeedNanos = Atomic<Int64>(0)
    private let feeds = Atomic<UInt64>(0)

    /// `hardware` is an opened (armed) watchdog; `timeoutSeconds` the timeout it took, when known.
    public init(hardware: Watchdog?, timeoutSeconds: Int?, systemd: SystemdNotifier?) {
        self.hardware = hardware
        self.systemd = systemd
        self.timeoutSeconds = timeoutSeconds
        // An interval of about a second, and at most a quarter of the timeout (a tick feeds
        // from half an interval after the last: see `tick`).
        var interval: Int64 = 1_000_000_000
        if let t = timeoutSeconds { interval = min(interval, Int64(t) * 250_000_000) }
        if let s = systemd?.watchdogIntervalNanos { interval = min(interval, Int64(s)) }
        intervalNanos = interval
    }

    /// Whether anything is watched at all.
    public var isActive: Bool { hardware != nil || systemd?.watchdogIntervalNanos != nil }

    /// Called from the control thread every tick (50 ms busy; idle, a second or `intervalNanos`), with whether the lifecycle is healthy
    /// (running with frames moving, or suspended with nothing in use, or starting, resuming,
    /// suspending within their bounded time). Unhealthy: no feed, and the board resets.
    public func tick(healthy: Bool, now: Int64 = monotonicNanoseconds()) {
        // Half an interval: the idle tick comes an interval after the last tick, and a tick
        // woken early (a change) just short of an interval would otherwise put the next feed
        // almost two intervals on; this way the feeds are at most 1.5 intervals apart.
        guard isActive, now - lastCheckNanos >= intervalNanos / 2 else { return }
        lastCheckNanos = now
        guard healthy else { return }
        hardware?.feed()
        if systemd?.watchdogIntervalNanos != nil { systemd?.notify("WATCHDOG=1") }
        lastFeedNanos.store(now, ordering: .relaxed)
        feeds.add(1, ordering: .releasing) // publishes `lastFeedNanos` to `describe`
    }

    /// Tells systemd something (`STATUS=…`, `READY=1`), when it started stagebox.
    public func notifySystemd(_ text: String) { systemd?.notify(text) }

    /// A clean stop: disarms the hardware watchdog so that it does not reset the board.
    public func stop() {
        hardware?.disarm()
        systemd?.notify("STOPPING=1")
    }

    /// One line for the console's `status`.
    public func describe(now: Int64 = monotonicNanoseconds()) -> String? {
        guard isActive else { return nil }
        var parts: [String] = []
        if let hardware {
            parts.append(hardware.path + (timeoutSeconds.map { ", timeout \($0) s" } ?? ""))
        }
        if systemd?.watchdogIntervalNanos != nil { parts.append("systemd") }
        let count = feeds.load(ordering: .acquiring)
        guard count > 0 else { return parts.joined(separator: " + ") + ", not fed yet (waiting for the codec)" }
        let ago = Double(now - lastFeedNanos.load(ordering: .relaxed)) / 1e9
        let fed = "fed \(fixed(ago, digits: 1)) s ago"
        let starving = ago > Double(intervalNanos) / 1e9 * 2 ? " (STARVING: the lifecycle is not healthy)" : ""
        return parts.joined(separator: " + ") + ", \(fed)\(starving)"
    }
}
