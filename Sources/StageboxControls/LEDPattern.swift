import StageboxTriggers
/// How an LED shows a trigger's state: normal and disabled off, selected on, alternate a
/// slow blink (1 Hz), error a fast blink (4 Hz). Blinks are in phase with the clock, so all
/// LEDs that blink alike blink together.
public enum LEDPattern {
    public static let slowPeriodNanos: Int64 = 1_000_000_000
    public static let fastPeriodNanos: Int64 = 250_000_000

    /// The blink period of `state`, or nil for a steady light.
    public static func blinkPeriod(_ state: TriggerState) -> Int64? {
        switch state {
        case .normal, .disabled, .selected: nil
        case .alternate: slowPeriodNanos
        case .error: fastPeriodNanos
        }
    }

    /// Whether an LED showing `state` is lit at `timeNanos` (on for the first half of each period).
    public static func level(_ state: TriggerState, timeNanos: Int64) -> Bool {
        guard let period = blinkPeriod(state) else { return state == .selected }
        return modulo(timeNanos, period) < period / 2
    }

    /// When `level` next changes after `timeNanos`, or nil when the light is steady.
    public static func nextChange(_ state: TriggerState, after timeNanos: Int64) -> Int64? {
        guard let period = blinkPeriod(state) else { return nil }
        let half = period / 2
        return timeNanos - modulo(timeNanos, half) + half
    }

    private static func modulo(_ a: Int64, _ b: Int64) -> Int64 {
        let r = a % b
        return r < 0 ? r + b : r
    }
}
