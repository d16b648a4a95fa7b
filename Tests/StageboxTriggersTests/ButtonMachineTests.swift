import Testing
@testable import StageboxTriggers

/// Debounce and long press without hardware: edges and times in, events out.
@Suite struct ButtonMachineTests {
    private let ms: Int64 = 1_000_000

    /// Feeds `edges` (level, time in ms), advancing to each deadline that comes before the
    /// next edge and finally to `until` ms; returns every event with its time in ms.
    private func run(_ machine: inout ButtonMachine, _ edges: [(Bool, Int64)], until: Int64) -> [(ButtonEvent, Int64)] {
        var out: [(ButtonEvent, Int64)] = []
        func catchUp(to t: Int64) {
            while let due = machine.nextDeadline, due <= t {
                out += machine.advance(to: due).map { ($0, due / ms) }
            }
        }
        for (level, at) in edges {
            catchUp(to: at * ms)
            out += machine.edge(pressed: level, at: at * ms).map { ($0, at) }
        }
        catchUp(to: until * ms)
        return out
    }

    private func events(_ list: [(ButtonEvent, Int64)]) -> [ButtonEvent] { list.map(\.0) }

    @Test func fiveEdgesWithinThreeMillisecondsGiveOnePress() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: nil)
        let bounces: [(Bool, Int64)] = [(true, 100), (false, 101), (true, 101), (false, 102), (true, 103)]
        let out = run(&m, bounces, until: 300)
        #expect(events(out) == [.press])
        #expect(out.first?.1 == 123, "counts 20 ms after the last bounce")
        #expect(m.pressed)
    }

    @Test func aBouncyReleaseGivesOneRelease() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: nil)
        let out = run(&m, [(true, 0), (false, 100), (true, 101), (false, 102), (true, 102), (false, 104)], until: 500)
        #expect(events(out) == [.press, .release])
        #expect(out.map(\.1) == [20, 124])
    }

    @Test func aGlitchShorterThanTheDebounceIsNothing() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: nil)
        let out = run(&m, [(true, 10), (false, 15)], until: 200)
        #expect(out.isEmpty)
        #expect(!m.pressed)
        #expect(m.nextDeadline == nil, "nothing pending once the line is back where it was")
    }

    @Test func withoutLongPressThePressFiresAtOnceNotOnRelease() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: nil)
        var out = run(&m, [(true, 0)], until: 5000)
        #expect(events(out) == [.press], "held for 5 s: a press, no long press")
        out = run(&m, [(false, 5000)], until: 6000)
        #expect(events(out) == [.release])
    }

    @Test func aLongPressFiresWhileHeldAndNoPress() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: 600 * ms)
        var out = run(&m, [(true, 1000)], until: 1500)
        #expect(out.isEmpty, "nothing until the hold reaches the long-press time")
        out = run(&m, [], until: 1700)
        #expect(events(out) == [.longPress])
        #expect(out.first?.1 == 1600, "600 ms after the press began, while still held")
        out = run(&m, [(false, 3000)], until: 4000)
        #expect(events(out) == [.release], "its release fires release only, no press")
    }

    @Test func aShortPressWithALongPressFiresPressOnRelease() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: 600 * ms)
        let out = run(&m, [(true, 1000), (false, 1300)], until: 3000)
        #expect(events(out) == [.press, .release])
        #expect(out.map(\.1) == [1320, 1320], "both when the release has settled")
    }

    @Test func debounceZeroTakesEveryEdgeAtOnce() {
        var m = ButtonMachine(debounceNanos: 0, longPressNanos: nil)
        #expect(m.edge(pressed: true, at: 5 * ms) == [.press])
        #expect(m.edge(pressed: false, at: 6 * ms) == [.release])
        #expect(m.edge(pressed: true, at: 7 * ms) == [.press])
        #expect(m.nextDeadline == nil)
    }

    @Test func aButtonHeldAtStartFiresNothingUntilPressedAgain() {
        var m = ButtonMachine(debounceNanos: 20 * ms, longPressNanos: 600 * ms, pressed: true, now: 0)
        #expect(m.nextDeadline == nil, "no long press for a press nobody saw")
        let out = run(&m, [(false, 2000), (true, 3000), (false, 3100)], until: 4000)
        #expect(events(out) == [.release, .press, .release])
    }
}
