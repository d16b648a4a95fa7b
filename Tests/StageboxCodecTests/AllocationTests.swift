import CALSA
import Foundation
import MallocInterposerSwift
import StageboxBus
import StageboxRealtime
import Synchronization
import Testing
@testable import StageboxCodec

/// The thread whose allocations count, and the count. Plain globals: the allocation hook
/// runs inside malloc and may touch nothing that allocates.
private let watchedThread = Atomic<UInt>(0)
private let armed = Atomic<Bool>(false)
private let audioThreadAllocations = Atomic<Int>(0)

private func countAudioThreadAllocation(_ size: Int) {
    if armed.load(ordering: .relaxed) && watchedThread.load(ordering: .relaxed) == currentThreadID() {
        audioThreadAllocations.add(1, ordering: .relaxed)
    }
}

@Suite(.serialized) struct AllocationTests {
    /// The real ALSA loop (user-space PCMs, free-running) with a graph that mixes, maps channels
    /// and generates a tone: after warming up, 10 000 periods must not allocate once.
    @Test func theAudioThreadAllocatesNothingInSteadyState() throws {
        stagebox_alsa_silence_errors()
        let period = 64, warmup = 200, measured = 10_000
        let frames = (warmup + measured + 50) * period
        let rig = try ALSATestRig(inputBytes: ALSATestRig.stimulus(format: .s32, frames: frames, channels: 2))
        defer { rig.remove() }
        let engine = try Engine.passthrough(period: period)
        try engine.connect(from: "tone", to: "codec.out")
        let control = DriverControl(frameLimit: frames)
        let driver = ALSADriver(parameters: ALSATestRig.parameters(format: .s32, period: period),
                                engine: engine, control: control, pacing: .free, config: rig.config)
        try driver.open()

        _ = (watchedThread.load(ordering: .relaxed), armed.load(ordering: .relaxed),
             audioThreadAllocations.load(ordering: .relaxed))
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.setAllocationHook(countAudioThreadAllocation)
        MallocInterposerSwift.hook()
        defer {
            MallocInterposerSwift.unhook()
            MallocInterposerSwift.setAllocationHook(nil)
        }

        // The counter must see allocations at all, or a zero below would prove nothing.
        watchedThread.store(currentThreadID(), ordering: .relaxed)
        armed.store(true, ordering: .relaxed)
        let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        probe.deallocate()
        armed.store(false, ordering: .relaxed)
        #expect(audioThreadAllocations.load(ordering: .relaxed) >= 1, "the allocation counter works")
        audioThreadAllocations.store(0, ordering: .relaxed)
        watchedThread.store(0, ordering: .relaxed)

        let thread = RealtimeThread {
            watchedThread.store(currentThreadID(), ordering: .relaxed)
            _ = driver.runLoop()
        }
        thread.start()
        // Arm after the warm-up, disarm before the loop winds down (drop and close may allocate).
        var periodsArmed = 0
        var armedAt = 0
        while control.framesProcessed.load(ordering: .relaxed) < warmup * period { usleep(200) }
        armedAt = control.framesProcessed.load(ordering: .relaxed)
        armed.store(true, ordering: .relaxed)
        while control.framesProcessed.load(ordering: .relaxed) < (warmup + measured + 10) * period { usleep(200) }
        armed.store(false, ordering: .relaxed)
        periodsArmed = (control.framesProcessed.load(ordering: .relaxed) - armedAt) / period
        thread.join()
        driver.close()

        #expect(periodsArmed >= measured)
        #expect(audioThreadAllocations.load(ordering: .relaxed) == 0,
                "allocations on the audio thread over \(periodsArmed) periods")
        print("allocation test: \(audioThreadAllocations.load(ordering: .relaxed)) allocations over \(periodsArmed) periods; "
              + control.statistics.snapshot().summary)
    }
}
