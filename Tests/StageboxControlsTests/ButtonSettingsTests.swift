import StageboxControls
import StageboxTriggers
import Testing

/// A button's settings: which trigger each of its events fires, and its press machine.
@Suite struct ButtonSettingsTests {
    private let ms: Int64 = 1_000_000

    @Test func triggersFollowTheButtonsSettings() {
        let b = ButtonSettings(name: "rec", chip: "gpiochip0", line: 17, press: "record", longPress: "marker")
        #expect(b.trigger(for: .press) == "record")
        #expect(b.trigger(for: .release) == nil)
        #expect(b.trigger(for: .longPress) == "marker")
        #expect(b.machine(pressed: false, now: 0).longPressNanos == 600 * ms)
        #expect(ButtonSettings(name: "x", chip: "c", line: 1, press: "mute").machine(pressed: false, now: 0).longPressNanos == nil)
    }
}
