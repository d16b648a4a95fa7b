import Testing
import StageboxDrivers
import StageboxLifecycle
import StageboxTestSupport

/// The state machine on its own: every transition, and the rule under random sequences.
@Suite struct LifecycleMachineTests {
    typealias M = LifecycleMachine
    static let settings = M.Settings(suspendAfter: 10, fadeSeconds: 0.02, minimumRun: 5, startGrace: 10,
                                     progressTimeout: 2, codecWaitGrace: 60)

    /// Drives a machine like the owner's tick, with a simulated driver that follows the commands.
    struct Rig {
        var machine = M(settings: LifecycleMachineTests.settings, at: 0)
        var now = 0.0
        var frames = 0
        var driver = DriverState.starting
        var silent = false
        var use = BusUse()
        var hung = false
        var codecMissing = false
        var log: [M.Command] = []
        /// Ticks until a fade-out reaches silence.
        var fadingOut = 0

        mutating func step(_ seconds: Double = 0.05) {
            now += seconds
            if driver == .running && !hung { frames += 64 }
            if fadingOut > 0 {
                fadingOut -= 1
                silent = fadingOut == 0
            }
            let commands = machine.observe(.init(use: use, driver: driver, framesProcessed: frames, outputsSilent: silent),
                                           at: now)
            log += commands
            for c in commands {
                switch c {
                case .fadeOut: fadingOut = 2 // the fade takes its time; two ticks later it is silent
                case .fadeIn: fadingOut = 0; silent = false
                case .pauseDriver: driver = .paused
                case .resumeDriver:
                    silent = false
                    driver = codecMissing ? .waitingForDevice : .running
                case .stopDriver: driver = .stopped
                }
            }
        }

        mutating func run(for seconds: Double) {
            let end = now + seconds
            while now < end { step() }
        }

        mutating func open() {
            driver = codecMissing ? .waitingForDevice : .running
            step()
            step()
        }
    }

    @Test func startsRunsAndSuspendsWhenIdle() {
        var r = Rig()
        #expect(r.machine.state == .starting)
        r.open()
        #expect(r.machine.state == .running)
        r.run(for: 9.5)
        #expect(r.machine.state == .running, "not before suspend_after")
        r.run(for: 1)
        #expect(r.machine.state == .suspended)
        #expect(r.log.contains(.fadeOut) && r.log.contains(.pauseDriver), "faded out, then paused: \(r.log)")
        #expect(r.machine.changes.map(\.to) == [.running, .suspending, .suspended])
        #expect(r.machine.summary(at: r.now).hasPrefix("suspended: not in use for 1"))
    }

    @Test func aClientPortResumes() {
        var r = Rig()
        r.open()
        r.run(for: 11)
        #expect(r.machine.state == .suspended)
        r.use = BusUse(clientPorts: 1)
        r.step()
        #expect(r.machine.state == .resuming && r.log.last == .resumeDriver)
        r.step()
        #expect(r.machine.state == .running)
        r.run(for: 35)
        #expect(r.machine.state == .running, "never suspends while a client has a port")
        #expect(r.machine.summary(at: r.now) == "running: 1 client port")
    }

    @Test func inUseDuringTheFadeOutTurnsBack() {
        var r = Rig()
        r.open()
        while r.machine.state == .running { r.step() }
        #expect(r.machine.state == .suspending)
        r.use = BusUse(takes: 1)
        r.step()
        #expect(r.machine.state == .running && r.log.last == .fadeIn)
        #expect(r.machine.changes.last?.reason == "in use again: recording")
    }

    @Test func aTakePlayedBackKeepsTheCodecRunning() {
        var r = Rig()
        r.open()
        r.use = BusUse(playing: 1)
        r.run(for: 35)
        #expect(r.machine.state == .running, "never suspends while a take plays")
        #expect(r.machine.summary(at: r.now) == "running: playing a take")
        #expect(BusUse(clientPorts: 1, takes: 1, playing: 1).description == "1 client port, recording, playing a take")
    }

    @Test func theConsoleSuspendIsRefusedWhileInUse() {
        var r = Rig()
        r.open()
        r.use = BusUse(clientPorts: 2)
        r.step()
        #expect(r.machine.requestSuspend() == .inUse(BusUse(clientPorts: 2)))
        #expect(LifecycleRefusal.inUse(BusUse(clientPorts: 2)).description.contains("2 client ports"))
        r.use = BusUse()
        r.step()
        #expect(r.machine.requestSuspend() == nil)
        r.run(for: 0.5)
        #expect(r.machine.state == .suspended)
        #expect(r.machine.requestSuspend() == .notRunning(.suspended))
        r.machine.requestResume()
        r.step()
        r.step()
        #expect(r.machine.state == .running)
    }

    @Test func noFlappingRightAfterAResume() {
        var r = Rig()
        r.open()
        r.run(for: 11)
        r.use = BusUse(clientPorts: 1)
        r.step()
        r.step()
        r.use = BusUse()
        r.run(for: 4.9)
        #expect(r.machine.state == .running, "the minimum run after a resume")
    }

    @Test func aStopFadesOutFirst() {
        var r = Rig()
        r.open()
        r.machine.requestStop()
        r.step()
        #expect(r.machine.state == .stopping && r.log.last == .fadeOut)
        r.step()
        #expect(r.log.last == .fadeOut, "not before the fade-out is silent")
        r.step()
        #expect(r.log.last == .stopDriver)
    }

    @Test func aMissingCodecIsWaitedForAndTheWatchdogToleratesItOnlyForAWhile() {
        var r = Rig()
        r.codecMissing = true
        r.open()
        #expect(r.machine.state == .waitingForCodec)
        #expect(r.machine.healthy(at: r.now))
        r.use = BusUse(clientPorts: 1)
        r.run(for: 59)
        #expect(r.machine.healthy(at: r.now), "clients wait within the grace")
        r.run(for: 2)
        #expect(!r.machine.healthy(at: r.now), "then the watchdog is starved")
        r.codecMissing = false
        r.driver = .running
        r.step()
        r.step()
        #expect(r.machine.state == .running && r.machine.healthy(at: r.now))
    }

    @Test func aHungLoopStarvesTheWatchdog() {
        var r = Rig()
        r.open()
        r.use = BusUse(clientPorts: 1)
        r.run(for: 1)
        #expect(r.machine.healthy(at: r.now))
        r.hung = true
        r.run(for: 2.5)
        #expect(!r.machine.healthy(at: r.now))
    }

    @Test func suspendedWithNothingInUseFeedsTheWatchdogForever() {
        var r = Rig()
        r.open()
        r.run(for: 11)
        r.run(for: 600)
        #expect(r.machine.state == .suspended && r.machine.healthy(at: r.now))
    }

    /// Random clients, takes, console requests, codec losses and hangs: never suspended (or on
    /// the way there) while in use after an observation, and the watchdog is fed only while
    /// the rule holds.
    @Test func neverSuspendedWhileInUseUnderRandomEvents() {
        var seed: UInt64 = 0x5EED
        func random(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        for _ in 0..<Emulation.scaled(200) {
            var r = Rig()
            r.open()
            for _ in 0..<2000 {
                let choice = random(40)
                switch choice {
                case 0: r.use.clientPorts = max(0, r.use.clientPorts + (random(2) == 0 ? 1 : -1))
                case 1: r.use.takes = random(2)
                case 2: _ = r.machine.requestSuspend()
                case 3: r.machine.requestResume()
                case 4: r.codecMissing.toggle()
                case 5: r.step(Double(random(30)))
                default: r.step(Double(random(10)) * 0.05)
                }
                if choice < 5 { r.step(0) } // the owner observes what changed
                let s = r.machine.state
                if r.use.inUse {
                    #expect(s != .suspended && s != .suspending, "in use yet \(s)")
                    if s == .suspended || s == .suspending { return }
                }
                if s == .suspended { #expect(r.machine.healthy(at: r.now) == !r.use.inUse) }
            }
        }
    }
}
