import Testing
@testable import StageboxControls

/// Which level an LED has for a trigger state at a given time.
@Suite struct LEDPatternTests {
    private let ms: Int64 = 1_000_000

    @Test func steadyStates() {
        for t: Int64 in [0, 123 * ms, 999 * ms, 10_000 * ms] {
            #expect(LEDPattern.level(.normal, timeNanos: t) == false)
            #expect(LEDPattern.level(.disabled, timeNanos: t) == false)
            #expect(LEDPattern.level(.selected, timeNanos: t) == true)
        }
        #expect(LEDPattern.nextChange(.selected, after: 5 * ms) == nil)
        #expect(LEDPattern.nextChange(.normal, after: 5 * ms) == nil)
    }

    @Test func alternateBlinksOnceASecond() {
        let levels = stride(from: Int64(0), to: 2000, by: 250).map { LEDPattern.level(.alternate, timeNanos: $0 * ms) }
        #expect(levels == [true, true, false, false, true, true, false, false])
        #expect(LEDPattern.nextChange(.alternate, after: 100 * ms) == 500 * ms)
        #expect(LEDPattern.nextChange(.alternate, after: 500 * ms) == 1000 * ms)
    }

    @Test func errorBlinksFourTimesASecond() {
        let levels = stride(from: Int64(0), to: 1000, by: 125).map { LEDPattern.level(.error, timeNanos: $0 * ms) }
        #expect(levels == [true, false, true, false, true, false, true, false])
        #expect(LEDPattern.level(.error, timeNanos: 124 * ms) && !LEDPattern.level(.error, timeNanos: 126 * ms))
        var t: Int64 = 0, changes = 0
        while let next = LEDPattern.nextChange(.error, after: t), next < 1000 * ms {
            #expect(LEDPattern.level(.error, timeNanos: next) != LEDPattern.level(.error, timeNanos: next - 1))
            t = next
            changes += 1
        }
        #expect(changes == 7, "8 half-periods of 125 ms in a second")
    }
}
