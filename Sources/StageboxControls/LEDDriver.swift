import StageboxSystem
import Synchronization
import StageboxTriggers

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
    /// What each LED was last set to (nil: not yet) and whether its line failed: the LED
    /// thread's own (the lock is never contended).
    private let shown: Mutex<(lit: [Bool?], broken: [Bool])>
    private let loop: ServiceLoop

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
        shown = Mutex(([Bool?](repeating: nil, count: leds.count), [Bool](repeating: false, count: leds.count)))
        loop = try ServiceLoop(named: "the LEDs")
    }

    /// Starts the thread; the LEDs show their triggers' states at once.
    public func start() throws(SystemCallError) {
        guard !leds.isEmpty else { return }
        try loop.start({ [self] _ in .init(deadline: showStates()) }, finish: { [self] in releaseLines() })
    }

    /// A trigger's state changed: the LEDs that show it follow now. Any thread; never blocks
    /// on the LED thread.
    public func changed(trigger: String) {
        let now = monotonicNanoseconds()
        pending.withLock { if $0[trigger] == nil { $0[trigger] = now } }
        loop.wake()
    }

    /// Stops the thread, turns every LED off and releases the lines.
    public func stop() { loop.stop() }

    /// One turn of the LED thread: every LED shows its trigger's state now; returns when the
    /// next blink step is due (nil: none blinks).
    private func showStates() -> Int64? {
        let changes = pending.withLock { table in
            let taken = table
            table.removeAll(keepingCapacity: true)
            return taken
        }
        let now = monotonicNanoseconds()
        var next: Int64?
        shown.withLock { shown in
            for (i, led) in leds.enumerated() where !shown.broken[i] {
                let shows = state(led.settings.trigger) ?? .normal
                let level = LEDPattern.level(shows, timeNanos: now)
                if shown.lit[i] != level {
                    do throws(GPIOError) {
                        try led.output.set(level)
                        shown.lit[i] = level
                    } catch {
                        shown.broken[i] = true
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
        }
        return next
    }

    /// After the last turn: every LED off, every line given back.
    private func releaseLines() {
        let broken = shown.withLock { $0.broken }
        for (i, led) in leds.enumerated() where !broken[i] { try? led.output.set(false) }
        for led in leds { led.output.release() }
    }
}
