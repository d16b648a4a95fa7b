import CLinux
import StageboxRealtime
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One LED: where it is wired and which trigger's state it shows.
public struct LEDSettings: Sendable, Equatable {
    public var chip: String
    public var line: Int
    /// Lit by driving the line low (an LED from the supply to the pin).
    public var activeLow: Bool
    public var trigger: String

    public init(chip: String, line: Int, activeLow: Bool = false, trigger: String) {
        self.chip = chip
        self.line = line
        self.activeLow = activeLow
        self.trigger = trigger
    }
}

/// What an LED is driven through: a GPIO line, or a recorder in the tests.
public protocol LEDOutput: AnyObject, Sendable {
    func set(_ on: Bool) throws(GPIOError)
    /// Gives the line back (after it was set off).
    func release()
}

extension GPIOLine: LEDOutput {}

/// Drives every LED from one thread: each shows its trigger's state as `LEDPattern` says,
/// woken at once by `changed(trigger:)` (a TriggerBoard listener) and by the next blink step.
public final class LEDDriver: Sendable {
    /// An LED shown its trigger's new state: what it shows, and how long after the change.
    public struct Shown: Sendable {
        public var settings: LEDSettings
        public var state: TriggerState
        public var lit: Bool
        /// From `changed(trigger:)` to the line set.
        public var latencyNanos: Int64
    }

    private let leds: [(settings: LEDSettings, output: any LEDOutput)]
    private let state: @Sendable (String) -> TriggerState?
    private let onShown: @Sendable (Shown) -> Void
    private let onProblem: @Sendable (GPIOError) -> Void
    /// Triggers changed since the thread last looked, with when the first change came.
    private let pending = Mutex<[String: Int64]>([:])
    private let stopping = Atomic<Bool>(false)
    private let wakeup: ThreadWakeup
    private let thread = Mutex<PosixThread?>(nil)

    /// Requests each LED's line as an output, off. Returns the lines that could be had, and
    /// an error (naming chip and line) for each one that could not.
    public static func open(_ leds: [LEDSettings], consumer: String = "stagebox")
        -> (leds: [(settings: LEDSettings, output: any LEDOutput)], errors: [GPIOError]) {
        var opened: [(settings: LEDSettings, output: any LEDOutput)] = []
        var errors: [GPIOError] = []
        for led in leds {
            do throws(GPIOError) {
                let line = try GPIOLine(chip: led.chip, offset: led.line)
                try line.drive(consumer: consumer, value: false, activeLow: led.activeLow)
                opened.append((led, line))
            } catch {
                errors.append(error)
            }
        }
        return (opened, errors)
    }

    /// `state` tells a trigger's state (nil: no such trigger yet, shown off); `onShown` hears
    /// each change an LED shows, `onProblem` an LED that cannot be set (it is then left alone).
    public init(leds: [(settings: LEDSettings, output: any LEDOutput)],
                state: @escaping @Sendable (String) -> TriggerState?,
                onShown: @escaping @Sendable (Shown) -> Void = { _ in },
                onProblem: @escaping @Sendable (GPIOError) -> Void = { _ in }) throws(SystemCallError) {
        self.leds = leds
        self.state = state
        self.onShown = onShown
        self.onProblem = onProblem
        wakeup = try ThreadWakeup(purpose: "the LED thread")
    }

    /// Starts the thread; the LEDs show their triggers' states at once.
    public func start() throws(SystemCallError) {
        guard !leds.isEmpty else { return }
        switch PosixThread.start(named: "the LEDs", { [self] in run() }) {
        case .success(let t): thread.withLock { $0 = t }
        case .failure(let error): throw error
        }
    }

    /// A trigger's state changed: the LEDs that show it follow now. Any thread; never blocks
    /// on the LED thread.
    public func changed(trigger: String) {
        let now = monotonicNanoseconds()
        pending.withLock { if $0[trigger] == nil { $0[trigger] = now } }
        wakeup.signal()
    }

    /// Stops the thread, turns every LED off and releases the lines.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wakeup.signal()
        thread.withLock { $0 }?.joinOrDetach()
        thread.withLock { $0 = nil }
    }

    private func run() {
        var lit = [Bool?](repeating: nil, count: leds.count)
        var broken = [Bool](repeating: false, count: leds.count)
        defer {
            for (i, led) in leds.enumerated() where !broken[i] { try? led.output.set(false) }
            for led in leds { led.output.release() }
        }
        while !stopping.load(ordering: .acquiring) {
            let changes = pending.withLock { table in
                let taken = table
                table.removeAll(keepingCapacity: true)
                return taken
            }
            let now = monotonicNanoseconds()
            var next: Int64?
            for (i, led) in leds.enumerated() where !broken[i] {
                let shows = state(led.settings.trigger) ?? .normal
                let level = LEDPattern.level(shows, timeNanos: now)
                if lit[i] != level {
                    do throws(GPIOError) {
                        try led.output.set(level)
                        lit[i] = level
                    } catch {
                        broken[i] = true
                        onProblem(error)
                        continue
                    }
                }
                if let changedAt = changes[led.settings.trigger] {
                    onShown(Shown(settings: led.settings, state: shows, lit: level,
                                  latencyNanos: monotonicNanoseconds() - changedAt))
                }
                if let step = LEDPattern.nextChange(shows, after: now) { next = min(next ?? step, step) }
            }
            var fd = pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)
            let timeout = next.map { max(0, $0 - monotonicNanoseconds()) } ?? -1
            if stagebox_poll_ns(&fd, 1, timeout) > 0 { wakeup.drain() }
        }
    }
}
