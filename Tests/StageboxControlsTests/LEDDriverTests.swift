import Synchronization
import Testing
@testable import StageboxControls
import StageboxTriggers
import StageboxSystem

/// An LED that records what it was set to and when.
private final class RecordingLED: LEDOutput {
    let sets = Mutex<[(on: Bool, at: Int64)]>([])
    let released = Atomic<Bool>(false)
    func set(_ on: Bool) throws(GPIOError) { sets.withLock { $0.append((on, monotonicNanoseconds())) } }
    func release() { released.store(true, ordering: .relaxed) }
    var last: Bool? { sets.withLock { $0.last?.on } }
}

/// The LED thread with recorders for lines: it follows a TriggerBoard within 20 ms, blinks
/// on its own, and leaves every LED off and released at stop.
@Suite(.serialized) struct LEDDriverTests {
    private func waitFor(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
        let end = monotonicNanoseconds() + Int64(seconds * 1e9)
        while monotonicNanoseconds() < end {
            if condition() { return true }
            sleepUntil(monotonicNanos: monotonicNanoseconds() + 1_000_000)
        }
        return condition()
    }

    @Test func anLEDFollowsItsTriggerWithin20Milliseconds() throws {
        let board = TriggerBoard()
        let on = Atomic<Bool>(false)
        board.add(name: "mute", title: "Mute") {
            let now = !on.load(ordering: .relaxed)
            on.store(now, ordering: .relaxed)
            return now ? .selected : .normal
        }
        let led = RecordingLED()
        let latencies = Mutex<[Int64]>([])
        let driver = try LEDDriver(leds: [(LEDSettings(chip: "test", line: 1, trigger: "mute"), led)],
                                   state: { board.state($0) },
                                   onShown: { shown in latencies.withLock { $0.append(shown.latencyNanos) } })
        board.onChange { name, _ in driver.changed(trigger: name) }
        try driver.start()
        #expect(waitFor { led.last == false }, "off at start: mute is normal")
        var measured: [Int64] = []
        for i in 0..<20 {
            let before = monotonicNanoseconds()
            let state = board.fire("mute")
            let expected = state == .selected
            #expect(waitFor { led.last == expected }, "change \(i): the LED shows \(String(describing: state))")
            let setAt = led.sets.withLock { $0.last?.at } ?? before
            measured.append(setAt - before)
        }
        driver.stop()
        measured.sort()
        let median = measured[measured.count / 2]
        print("LED latency, trigger fired → line set: median \(Double(median) / 1e6) ms, max \(Double(measured.last!) / 1e6) ms over \(measured.count) changes")
        #expect(median < 20_000_000, "the median change shows within 20 ms")
        #expect(latencies.withLock { $0.count } == 20, "each change reported with its latency")
    }

    @Test func errorBlinksFastAndStopLeavesTheLEDOffAndReleased() throws {
        let board = TriggerBoard()
        board.add(name: "record", title: "Record") { .normal }
        let led = RecordingLED()
        let driver = try LEDDriver(leds: [(LEDSettings(chip: "test", line: 2, trigger: "record"), led)],
                                   state: { board.state($0) })
        board.onChange { name, _ in driver.changed(trigger: name) }
        try driver.start()
        board.setState("record", .error)
        #expect(waitFor(30) { led.sets.withLock { $0.count } >= 6 }, "an error blinks: several changes in under a second")
        let times = led.sets.withLock { $0.suffix(3).map(\.at) }
        let step = Double(times[2] - times[1]) / 1e6
        #expect(step > 60 && step < 250, "half a 4 Hz period apart (125 ms), measured \(step) ms")
        driver.stop()
        #expect(led.last == false)
        let released = led.released.load(ordering: .relaxed)
        #expect(released)
    }

    @Test func aTriggerThatDoesNotExistShowsOff() throws {
        let led = RecordingLED()
        let driver = try LEDDriver(leds: [(LEDSettings(chip: "test", line: 3, trigger: "call.mute"), led)],
                                   state: { _ in nil })
        try driver.start()
        #expect(waitFor { led.last != nil })
        driver.stop()
        #expect(led.sets.withLock { $0.map(\.on) } == [false, false], "off while running, off at stop")
    }
}
