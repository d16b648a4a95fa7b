/// What a button did, once debounced.
public enum ButtonEvent: Sendable, Equatable {
    /// A press: at once without a long press; with one, at a release before the long press.
    case press
    /// The button was let go (after any `press` that the release itself caused).
    case release
    /// Held for the long-press time (fired while still held; that hold fires no `press`).
    case longPress
}

/// Debounce and long press of one button, as a pure state machine: the caller passes in every
/// edge with its time and calls `advance(to:)` when `nextDeadline` comes. Times are
/// nanoseconds of one clock (the kernel stamps GPIO edges with CLOCK_MONOTONIC).
///
/// A change of level counts once the line has kept it for `debounceNanos`: bounces within that
/// time restart the wait, so a burst of edges gives one change.
public struct ButtonMachine: Sendable, Equatable {
    public let debounceNanos: Int64
    /// nil: the button has no long press, and `press` fires at once.
    public let longPressNanos: Int64?

    /// The debounced level: true while pressed.
    public private(set) var pressed: Bool
    /// The level of the last edge seen, and when it came.
    public private(set) var rawLevel: Bool
    private var rawChangedAt: Int64
    /// When the debounced press began, and whether its long press has fired.
    private var pressedAt: Int64 = 0
    private var longPressFired = false

    /// A button whose line reads `pressed` at `now` (a button held at start fires nothing until
    /// it is let go and pressed again).
    public init(debounceNanos: Int64, longPressNanos: Int64?, pressed: Bool = false, now: Int64 = 0) {
        self.debounceNanos = max(0, debounceNanos)
        self.longPressNanos = longPressNanos
        self.pressed = pressed
        rawLevel = pressed
        rawChangedAt = now
        pressedAt = now
        // A button already held at start must not fire a long press of a press nobody saw.
        longPressFired = pressed
    }

    /// An edge: the line went to `level` (true = pressed) at `time`. Returns what it caused
    /// by itself (only with no debounce); call `advance(to:)` for the rest.
    public mutating func edge(pressed level: Bool, at time: Int64) -> [ButtonEvent] {
        rawLevel = level
        // Edges seen out of order (two lines' events interleaved) never move time back.
        rawChangedAt = max(rawChangedAt, time)
        return debounceNanos == 0 ? advance(to: time) : []
    }

    /// Everything that is due at `now`: a level that has now been stable long enough, and a
    /// long press whose time has come.
    public mutating func advance(to now: Int64) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        if rawLevel != pressed && now - rawChangedAt >= debounceNanos {
            pressed = rawLevel
            if pressed {
                pressedAt = rawChangedAt
                longPressFired = false
                if longPressNanos == nil { events.append(.press) }
            } else {
                if longPressNanos != nil && !longPressFired { events.append(.press) }
                events.append(.release)
            }
        }
        if pressed, !longPressFired, let long = longPressNanos, now - pressedAt >= long {
            longPressFired = true
            events.append(.longPress)
        }
        return events
    }

    /// When `advance(to:)` has something to do next: the end of a debounce wait or a long
    /// press; nil when nothing is pending (only an edge can change anything).
    public var nextDeadline: Int64? {
        if rawLevel != pressed { return rawChangedAt + debounceNanos }
        if pressed, !longPressFired, let long = longPressNanos { return pressedAt + long }
        return nil
    }
}
