import Foundation
import Synchronization
import Testing
@testable import StageboxEngine

@Suite struct GraphChangeTests {
    @Test func aNewConnectionFadesInOverOnePeriod() throws {
        var h = EngineHarness()
        h.period()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        let first = h.period { _, _ in 1 }[0]
        #expect(first[0] == 0 && first[63] > 0.95)
        #expect(zip(first, first.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(h.period { _, _ in 1 }[0].allSatisfy { $0 == 1 })
        try h.engine.disconnect(from: "codec.in", to: "codec.out")
        let last = h.period { _, _ in 1 }[0]
        #expect(last[0] == 1 && last[63] < 0.05)
        #expect(h.period { _, _ in 1 }[0].allSatisfy { $0 == 0 })
    }

    @Test func connectionsChangeWhileAudioRunsWithoutAClick() throws {
        // A DC input of 0.5, connected and disconnected over and over from another thread while
        // the audio side runs: consecutive output samples may only move by a fade step.
        var h = EngineHarness()
        h.period() // audio is running: from now on every change fades
        let engine = h.engine
        let stop = Atomic<Bool>(false)
        let changes = Atomic<Int>(0)
        let changer = Thread {
            while !stop.load(ordering: .relaxed) {
                try? engine.connect(from: "codec.in", to: "codec.out")
                try? engine.connect(from: "tone", to: "codec.out")
                try? engine.disconnect(from: "codec.in", to: "codec.out")
                try? engine.disconnect(from: "tone", to: "codec.out")
                changes.add(4, ordering: .relaxed)
                usleep(50)
            }
        }
        changer.start()
        var harness = h
        var previous: Float = 0
        var largestStep: Float = 0
        var periods = 0
        // Run until the other thread has made enough changes (it may start late on a busy machine).
        while periods < 5000 || (changes.load(ordering: .relaxed) < 400 && periods < 2_000_000) {
            let out = harness.period { _, _ in 0.5 }[0]
            for x in out {
                largestStep = max(largestStep, abs(x - previous))
                previous = x
            }
            periods += 1
        }
        stop.store(true, ordering: .relaxed)
        let made = changes.load(ordering: .relaxed)
        #expect(made >= 400)
        // One fade step of 0.5 over 64 frames is 0.0078; allow a little for two overlapping fades.
        #expect(largestStep <= 0.5 / 64 * 2 + 1e-6, "largest step \(largestStep) over \(made) changes in \(periods) periods")
    }
}
