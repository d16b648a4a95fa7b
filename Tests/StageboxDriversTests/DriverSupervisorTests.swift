import StageboxTestSupport
import CALSA
import Foundation
import Logging
import Synchronization
import Testing
import StageboxEngine
import StageboxRealtime
@testable import StageboxDrivers
import StageboxSystem

/// The supervisor runs every driver the same way: these run it on a thread of its own and
/// watch the driver's state and frames from outside, as the console does.
@Suite struct DriverSupervisorTests {
    init() { stagebox_alsa_silence_errors() }

    final class Outcome: @unchecked Sendable { // written by the supervisor thread before `done`
        var error: DriverError?
        let done = Atomic<Bool>(false)
    }

    private func start(_ driver: any AudioDriver, backoffMs: Int = 100) throws -> (RealtimeThread, Outcome) {
        let outcome = Outcome()
        let thread = RealtimeThread {
            do throws(DriverError) {
                try DriverSupervisor(driver: driver, logger: Logger(label: "test"), firstBackoffMs: backoffMs).run { false }
            } catch {
                outcome.error = error
            }
            outcome.done.store(true, ordering: .releasing)
        }
        try thread.start()
        return (thread, outcome)
    }

    private func waitFor(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Pause closes the device and ends the audio thread; resume opens it and goes on.
    @Test func pauseStopsTheAudioThreadAndResumeGoesOn() throws {
        let control = DriverControl()
        let engine = try Engine.passthrough(period: 64)
        let driver = SimulatedDriver(engine: engine, control: control, inputSignal: .sine)
        let (thread, outcome) = try start(driver)
        defer { control.requestStop(); thread.join() }
        #expect(waitFor { control.framesProcessed.load(ordering: .relaxed) > 4800 })
        #expect(control.state.load(ordering: .relaxed) == .running)
        control.requestPause()
        #expect(waitFor { control.state.load(ordering: .relaxed) == .paused })
        #expect(control.statistics.audioThread.load(ordering: .relaxed) == 0, "no audio thread while paused")
        let frozen = control.framesProcessed.load(ordering: .relaxed)
        usleep(300_000)
        #expect(control.framesProcessed.load(ordering: .relaxed) == frozen, "nothing is processed while paused")
        control.requestResume()
        #expect(waitFor { control.framesProcessed.load(ordering: .relaxed) > frozen + 4800 })
        #expect(control.state.load(ordering: .relaxed) == .running)
        control.requestStop()
        #expect(waitFor { outcome.done.load(ordering: .acquiring) })
        #expect(outcome.error == nil)
        #expect(control.state.load(ordering: .relaxed) == .stopped)
    }

    /// The lifecycle's race: a pause asked for in one tick and a resume in the next, which comes
    /// after the audio thread has ended its loop for the pause (a client arriving just as the
    /// codec suspends). The codec reopens; the run must not end, as it did (seen in the VM rig).
    @Test func aResumeJustAfterThePauseEndedTheLoopReopensTheCodec() throws {
        let control = DriverControl()
        let engine = try Engine.passthrough(period: 64)
        let driver = SimulatedDriver(engine: engine, control: control, inputSignal: .sine)
        final class Step: Sendable { let value = Atomic<Int>(0) } // 0: running, 1: pause asked, 2: resume asked
        let step = Step()
        let outcome = Outcome()
        let thread = RealtimeThread {
            do throws(DriverError) {
                try DriverSupervisor(driver: driver, logger: Logger(label: "test")).run {
                    switch step.value.load(ordering: .relaxed) {
                    case 0 where control.framesProcessed.load(ordering: .relaxed) > 4800:
                        control.requestPause()
                        step.value.store(1, ordering: .relaxed)
                    case 1 where control.statistics.audioThread.load(ordering: .relaxed) == 0:
                        // Once the loop has ended for the pause (the pause wakes the tick at once,
                        // before the audio thread may have seen it).
                        control.requestResume()
                        step.value.store(2, ordering: .relaxed)
                    default:
                        break
                    }
                    return true
                }
            } catch {
                outcome.error = error
            }
            outcome.done.store(true, ordering: .releasing)
        }
        try thread.start()
        defer { control.requestStop(); thread.join() }
        #expect(waitFor { step.value.load(ordering: .relaxed) == 2 })
        let resumedAt = control.framesProcessed.load(ordering: .relaxed)
        #expect(waitFor { control.framesProcessed.load(ordering: .relaxed) > resumedAt + 4800 },
                "the codec runs again after the resume")
        let ended = outcome.done.load(ordering: .acquiring)
        #expect(!ended, "the run went on")
        #expect(control.pausesRequested == 1)
    }

    /// A device that is not there is waited for, with the next try's time shown; a stop ends the wait.
    @Test func aMissingDeviceIsWaitedForWithBackoff() throws {
        let rig = try ALSATestRig(inputBytes: [])
        defer { rig.remove() }
        let control = DriverControl()
        let driver = ALSADriver(parameters: ALSATestRig.parameters(format: .s16, capture: "nosuchpcm"),
                                engine: try .passthrough(period: 64), control: control, config: rig.config)
        let (thread, outcome) = try start(driver, backoffMs: 400)
        #expect(waitFor { control.state.load(ordering: .relaxed) == .waitingForDevice })
        let retryAt = control.retryAt.load(ordering: .relaxed)
        #expect(retryAt > monotonicNanoseconds(), "the next try is in the future")
        #expect(retryAt - monotonicNanoseconds() <= 400_000_000)
        control.requestStop()
        thread.join()
        #expect(outcome.error == nil, "stopping while waiting is a normal end")
        #expect(control.framesProcessed.load(ordering: .relaxed) == 0)
    }

    /// A device that cannot do what is asked is not retried: the error reaches the caller.
    @Test func aConfigurationTheDeviceCannotDoEndsTheRun() throws {
        let restricted = try ALSAConfigText("pcm.lin { type linear slave { pcm { type null } format S16_LE } }")
        let q = ALSAParameters(captureDevice: "lin", playbackDevice: "lin", format: .float, sampleRate: 48000,
                               inputs: 2, outputs: 2, periods: 2, realtimePriority: 0)
        let control = DriverControl()
        let driver = ALSADriver(parameters: q, engine: try .passthrough(period: 64), control: control, config: restricted)
        let (thread, outcome) = try start(driver)
        thread.join()
        guard case .alsa(.unsupported(_, _, let parameter, _, _))? = outcome.error else {
            Issue.record("expected an unsupported format, got \(String(describing: outcome.error))")
            return
        }
        #expect(parameter == "format")
        #expect(outcome.error?.isRetryable == false)
    }

    /// The frame limit ends the run once, without reopening the device.
    @Test func theFrameLimitEndsTheRun() throws {
        let rig = try ALSATestRig(inputBytes: ALSATestRig.stimulus(format: .s16, frames: 64 * 20, channels: 2))
        defer { rig.remove() }
        let control = DriverControl(frameLimit: 64 * 20)
        let driver = ALSADriver(parameters: ALSATestRig.parameters(format: .s16),
                                engine: try .passthrough(period: 64), control: control, pacing: .free, config: rig.config)
        let (thread, outcome) = try start(driver)
        thread.join()
        #expect(outcome.error == nil)
        #expect(control.framesProcessed.load(ordering: .relaxed) == 64 * 20)
        #expect(control.statistics.snapshot().periods == 20)
    }

    /// A codec that fails while running is reopened at once; backoff is for one that stays away.
    @Test func aFailureWhileRunningIsReopenedAtOnce() throws {
        final class FailingOnce: AudioDriver, @unchecked Sendable { // used by one thread at a time
            let engine: Engine
            let control: DriverControl
            let name = "failing once"
            let realtimePriority = 0
            let periodFrames = 64
            var runs = 0
            var ended: Int64 = 0
            var restarted: Int64 = 0
            private var timing: CycleSupervision
            init(engine: Engine, control: DriverControl) {
                self.engine = engine
                self.control = control
                timing = CycleSupervision(control: control, periodNanos: 1_333_333)
            }
            func open() throws(DriverError) {}
            func close() {}
            func run() -> DriverError? {
                runs += 1
                timing.restart()
                if runs == 1 {
                    timing.cycleDone(frames: 64, startedAt: monotonicNanoseconds())
                    ended = monotonicNanoseconds()
                    return .alsa(.disappeared(device: "hw:test", code: -19))
                }
                restarted = monotonicNanoseconds()
                while !control.shouldStop() {
                    timing.cycleDone(frames: 64, startedAt: monotonicNanoseconds())
                    usleep(1333)
                }
                return nil
            }
        }
        let control = DriverControl()
        let driver = FailingOnce(engine: try .passthrough(period: 64), control: control)
        let (thread, outcome) = try start(driver, backoffMs: 2000)
        #expect(waitFor { driver.runs == 2 && control.framesProcessed.load(ordering: .relaxed) > 64 * 10 })
        control.requestStop()
        thread.join()
        #expect(outcome.error == nil)
        let gap = Double(driver.restarted - driver.ended) / 1e6
        #expect(gap < 500, "reopened at once, not after the 2 s backoff: \(gap) ms")
    }

    /// The control thread's tick: once a second while it says it is idle, not every 50 ms (a
    /// quiet box costs next to nothing). Judged by counts only: a busy machine can make ticks
    /// late and fewer, never more.
    @Test func anIdleTickComesOnceASecond() throws {
        let control = DriverControl()
        let engine = try Engine.passthrough(period: 64)
        let driver = SimulatedDriver(engine: engine, control: control, inputSignal: .sine)
        let ticks = Atomic<Int>(0)
        let thread = RealtimeThread {
            try? DriverSupervisor(driver: driver, logger: Logger(label: "test")).run {
                ticks.add(1, ordering: .relaxed)
                return false
            }
        }
        try thread.start()
        defer { control.requestStop(); thread.join() }
        #expect(waitFor { control.framesProcessed.load(ordering: .relaxed) > 4800 })
        let before = ticks.load(ordering: .relaxed)
        usleep(3_000_000)
        let idle = ticks.load(ordering: .relaxed) - before
        #expect(idle <= 4, "\(idle) ticks in three idle seconds (one a second)")
    }

    /// A wakeup brings a tick at once, and a busy tick the next in 50 ms: with the idle tick
    /// stretched to a minute, every tick counted here came from them, not from the clock.
    @Test func aWakeupBringsATickAndBusyTicksFollow() throws {
        let control = DriverControl()
        let engine = try Engine.passthrough(period: 64)
        let driver = SimulatedDriver(engine: engine, control: control, inputSignal: .sine)
        let ticks = Atomic<Int>(0)
        let busy = Atomic<Bool>(false)
        let thread = RealtimeThread {
            try? DriverSupervisor(driver: driver, logger: Logger(label: "test"), idleTickNanos: 60_000_000_000).run {
                ticks.add(1, ordering: .relaxed)
                return busy.load(ordering: .relaxed)
            }
        }
        try thread.start()
        defer { control.requestStop(); thread.join() }
        #expect(waitFor { control.framesProcessed.load(ordering: .relaxed) > 4800 })
        usleep(200_000) // past the first period's busy ticks
        for _ in 0..<10 {
            let seen = ticks.load(ordering: .relaxed)
            control.wakeControl()
            #expect(waitFor(5) { ticks.load(ordering: .relaxed) > seen }, "a wakeup brought no tick")
        }
        busy.store(true, ordering: .relaxed)
        let before = ticks.load(ordering: .relaxed)
        control.wakeControl()
        #expect(waitFor(5) { ticks.load(ordering: .relaxed) >= before + 4 }, "busy ticks did not follow")
    }
}

/// The start line about the audio thread's scheduling, for each outcome.
@Suite struct SchedulingReportTests {
    @Test func eachOutcomeHasItsLine() {
        let fifo = SchedulingReport.line(.fifo(priority: 70, asked: 70), periodFrames: 64, sampleRate: 48000)
        #expect(fifo.0 == .info && fifo.1 == "audio thread: SCHED_FIFO priority 70")
        let limited = SchedulingReport.line(.fifo(priority: 10, asked: 70), periodFrames: 64, sampleRate: 48000)
        #expect(limited.0 == .notice)
        #expect(limited.1 == "audio thread: SCHED_FIFO priority 10 (rt_priority asks 70; RLIMIT_RTPRIO allows at most 10)")
        let normal = SchedulingReport.line(.normal(nice: -20), periodFrames: 256, sampleRate: 48000)
        #expect(normal.0 == .notice)
        #expect(normal.1.hasPrefix("audio thread: normal scheduling, nice -20 (rt_priority = 0): any busy program "
                                   + "on the board can delay a period past its 5.33 ms deadline"))
        let refused = SchedulingReport.line(.refused(priority: 70, errno: EPERM, rtprioLimit: 0, nice: 0),
                                            periodFrames: 64, sampleRate: 48000)
        #expect(refused.0 == .warning)
        #expect(refused.1.hasPrefix("audio thread: SCHED_FIFO priority 70 refused (Operation not permitted; "
                                    + "RLIMIT_RTPRIO is 0), so it runs without real-time scheduling"))
    }
}

@Suite struct StatisticsSummaryTests {
    @Test func theLineCarriesTheMedianAndTheP99() {
        let stats = AudioStatistics()
        for _ in 0..<99 { stats.recordCycle(nanos: 4000) }
        stats.recordCycle(nanos: 900_000)
        let line = stats.snapshot().summary
        #expect(line.range(of: "cycle: mean=13.0 µs max=900.0 µs median=4.0 µs p99=4.0 µs over-quarter-period=") != nil, "\(line)")
    }

    /// How many cycles took more than a quarter of the period (here 1 ms: over 250 µs), the
    /// figure beside the worst; a reset starts it again.
    @Test func cyclesOverAQuarterPeriodAreCounted() {
        let stats = AudioStatistics()
        stats.periodNanos.store(1_000_000, ordering: .relaxed)
        for n in [100_000, 250_000, 250_001, 900_000, 2_000_000] { stats.recordCycle(nanos: n) }
        #expect(stats.snapshot().cyclesOverQuarterPeriod == 3)
        #expect(stats.snapshot().summary.contains("over-quarter-period=3 "), "\(stats.snapshot().summary)")
        stats.reset()
        #expect(stats.snapshot().cyclesOverQuarterPeriod == 0)
    }
}
