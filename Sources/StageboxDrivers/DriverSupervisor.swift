import Logging
import StageboxFormatting
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs any `AudioDriver` the same way: opens it (retrying with backoff while the device is
/// missing or busy), runs its loop on a real-time thread while the calling thread services
/// it and ticks, closes it, reopens it after a failure, and holds it closed while paused.
/// The one place that decides what happens around the loop; the drivers only move audio.
public final class DriverSupervisor {
    public let driver: any AudioDriver
    private let logger: Logger
    /// The first and the longest wait between tries to open a missing device.
    private let firstBackoffMs: Int
    private let longestBackoffMs: Int

    /// How long the control thread sleeps between idle ticks unless woken (a watchdog fed more
    /// often shortens it; tests stretch it).
    private let idleTickNanos: Int64

    public init(driver: any AudioDriver, logger: Logger, firstBackoffMs: Int = 100, longestBackoffMs: Int = 5000,
                idleTickNanos: Int64 = AudioThreadRunner.idleTickNanos) {
        self.driver = driver
        self.logger = logger
        self.idleTickNanos = idleTickNanos
        self.firstBackoffMs = firstBackoffMs
        self.longestBackoffMs = longestBackoffMs
    }

    private var control: DriverControl { driver.control }
    /// The audio thread's scheduling is logged at its first start only (a resume after a
    /// suspend gets the same).
    private var reportedScheduling = false
    private var reportedFirstPeriod = false
    private var wakeup: Wakeup? { control.wakeup }

    /// Runs until a stop is requested, the frame limit is reached or the input ends. `tick`
    /// runs on the calling thread throughout, also while waiting or paused, after the engine's
    /// clean-up (the graph snapshots the audio thread has left are freed here, on the control
    /// thread, whatever else runs). It says whether it is busy: every 50 ms then, else every
    /// `idleTickNanos`, or at once when the control's wakeup is signalled (see `AudioThreadRunner`).
    /// Throws when the driver fails in a way that trying again cannot mend (the device cannot
    /// do what the configuration asks; a file cannot be written).
    public func run(tick ownTick: () -> Bool) throws(DriverError) {
        defer { control.state.store(.stopped, ordering: .relaxed) }
        let engine = driver.engine
        func tick() -> Bool {
            engine.collect()
            return ownTick()
        }
        var backoffMs = firstBackoffMs
        // When a running codec last failed: the first reopen is at once (an appliance in use
        // must come back now); backoff is for a device that stays away.
        var failedAt: Int64?
        while !control.stopRequested {
            if control.pauseRequested {
                control.state.store(.paused, ordering: .relaxed)
                // A resume wakes it; the idle tick feeds the watchdog meanwhile.
                waitOrStop(milliseconds: Int(idleTickNanos / 1_000_000), endsOnWakeup: true, tick: tick)
                continue
            }
            control.state.store(.starting, ordering: .relaxed)
            do {
                try driver.open()
            } catch where error.isRetryable {
                logger.error("\(error); trying again in \(backoffMs) ms")
                wait(backoffMs, tick: tick)
                backoffMs = min(backoffMs * 2, longestBackoffMs)
                continue
            } catch {
                try? driver.finish()
                throw error
            }
            backoffMs = firstBackoffMs
            for (level, line) in driver.openReport() { logger.log(level: level, Logger.Message(stringLiteral: line)) }
            let pausesBefore = control.pausesRequested
            let failure = runOnce(failedAt: &failedAt, tick: tick)
            driver.close()
            switch failure {
            case nil:
                // Ended for a pause, even when a resume came in a tick after the loop ended (a
                // client arriving as the codec suspends): go round again, paused or reopening.
                // Only a stop, the frame limit or the input's end finish the run.
                if control.pausesRequested != pausesBefore && !control.stopRequested && !control.frameLimitReached {
                    logger.info(control.pauseRequested ? "paused: \(driver.name) closed"
                                                       : "paused and resumed at once: \(driver.name) closed and reopened")
                    continue
                }
                try driver.finish()
                return
            case let error? where error.isRetryable:
                if failedAt == nil {
                    failedAt = monotonicNanoseconds()
                    logger.error("\(error); reopening at once")
                } else {
                    logger.error("\(error); reopening in \(backoffMs) ms")
                    wait(backoffMs, tick: tick)
                    backoffMs = min(backoffMs * 2, longestBackoffMs)
                }
            case let error?:
                try? driver.finish()
                throw error
            }
        }
        try driver.finish()
    }

    /// One run of the loop on its own thread; returns how it ended. After a failure
    /// (`failedAt`), says how long the codec was gone once the first period is processed.
    private func runOnce(failedAt: inout Int64?, tick: () -> Bool) -> DriverError? {
        let driver = self.driver
        let logger = self.logger
        var reportedStart = false
        var serviceError: DriverError?
        var failed = failedAt
        let control = self.control
        control.state.store(.running, ordering: .relaxed)
        let failure: DriverError?
        do {
            failure = try AudioThreadRunner.run(priority: driver.realtimePriority, scheduled: { outcome in
                guard driver.paced, !self.reportedScheduling else { return }
                self.reportedScheduling = true
                let (level, line) = SchedulingReport.line(outcome, periodFrames: driver.period,
                                                          sampleRate: driver.engine.settings.sampleRate)
                logger.log(level: level, Logger.Message(stringLiteral: line))
            }, wakeup: wakeup, idleTickNanos: idleTickNanos, tick: {
            if driver.paced, !self.reportedFirstPeriod, control.firstPeriodAt.load(ordering: .relaxed) > 0 {
                // On the monotonic clock, so that a bench can take exec-to-first-period from outside.
                self.reportedFirstPeriod = true
                let at = Double(control.firstPeriodAt.load(ordering: .relaxed)) / 1e9
                logger.info(Logger.Message(stringLiteral: "first period processed at monotonic \(fixed(at, digits: 6)) s"))
            }
            if !reportedStart, let line = driver.startReport() {
                reportedStart = true
                logger.info(Logger.Message(stringLiteral: line))
            }
            if let since = failed, control.firstPeriodAt.load(ordering: .relaxed) > since {
                let gap = Double(control.firstPeriodAt.load(ordering: .relaxed) - since) / 1e6
                logger.notice(Logger.Message(stringLiteral: "restarted: audio again \(fixed(gap, digits: 1)) ms after the failure"))
                failed = nil
            }
            if serviceError == nil {
                do throws(DriverError) { try driver.service() } catch {
                    serviceError = error
                    control.requestStop()
                }
            }
            // Busy until the first period is reported, while a failure's gap is untold, and
            // for a driver whose service drains a ring.
            return tick() || (driver.paced && !self.reportedFirstPeriod) || failed != nil || driver.needsFrequentService
            }) {
                driver.run()
            }
        } catch {
            return .thread(error)
        }
        failedAt = failed
        return serviceError ?? failure
    }

    /// Waits before trying the device again, showing when in the driver's state.
    private func wait(_ milliseconds: Int, tick: () -> Bool) {
        control.retryAt.store(monotonicNanoseconds() + Int64(milliseconds) * 1_000_000, ordering: .relaxed)
        control.state.store(.waitingForDevice, ordering: .relaxed)
        waitOrStop(milliseconds: milliseconds, tick: tick)
    }

    /// Ticks until `milliseconds` have passed or a stop is asked for. A signalled wakeup ticks
    /// at once, and with `endsOnWakeup` (a pause, which a resume ends) ends the wait; a device's
    /// backoff runs its time.
    private func waitOrStop(milliseconds: Int, endsOnWakeup: Bool = false, tick: () -> Bool) {
        let end = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
        while !control.stopRequested {
            let busy = tick()
            let left = end - monotonicNanoseconds()
            guard left > 0 else { return }
            let nanos = min(left, busy ? AudioThreadRunner.busyTickNanos : idleTickNanos)
            if AudioThreadRunner.pause(nanos, wakeup: wakeup) && endsOnWakeup { break }
        }
        _ = tick()
    }
}
