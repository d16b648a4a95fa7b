import StageboxHealth
import Testing

@Suite struct HealthChangesTests {
    private func reading(throttle: UInt32? = nil, alarm: Bool? = nil, temperature: Double? = nil) -> HealthReading {
        var r = HealthReading()
        r.throttle = throttle.map(ThrottleFlags.init(rawValue:))
        r.underVoltageAlarm = alarm
        r.temperature = temperature
        r.frequencyMHz = 600
        r.maxFrequencyMHz = 1500
        return r
    }

    @Test func underVoltageIsToldWhenSeenAndWhenGone() {
        var changes = HealthChanges(warnTemperature: 80)
        #expect(changes.lines(from: nil, to: reading(alarm: false)).isEmpty)
        let seen = changes.lines(from: reading(alarm: false), to: reading(alarm: true))
        #expect(seen.count == 1 && seen[0].hasPrefix("health: UNDER-VOLTAGE"))
        #expect(changes.lines(from: reading(alarm: true), to: reading(alarm: true)).isEmpty)
        #expect(changes.lines(from: reading(alarm: true), to: reading(alarm: false)) == ["health: under-voltage gone: the supply is good again"])
        // The first reading tells what is already wrong.
        var fresh = HealthChanges(warnTemperature: 80)
        #expect(fresh.lines(from: nil, to: reading(throttle: 0x50005)).count == 2)
    }

    @Test func throttlingStartsAndStopsWithItsReasonAndTheClock() {
        var changes = HealthChanges(warnTemperature: 80)
        let started = changes.lines(from: reading(throttle: 0), to: reading(throttle: 0x6))
        #expect(started == ["health: throttling started (frequency capped, throttled): the CPU runs slower than asked; CPU 0 at 600 of 1500 MHz"])
        #expect(changes.lines(from: reading(throttle: 0x6), to: reading(throttle: 0x60006)) == [])
        #expect(changes.lines(from: reading(throttle: 0x60006), to: reading(throttle: 0x60000))
            == ["health: throttling stopped; CPU 0 at 600 of 1500 MHz"])
    }

    @Test func heatIsToldOnceAtTheLimitAndAgainTwoDegreesUnder() {
        var changes = HealthChanges(warnTemperature: 80)
        var lines: [String] = []
        var before: HealthReading?
        for t in [70.0, 79.9, 80.0, 81.5, 79.0, 80.4, 78.1, 77.9, 80.2] {
            let now = reading(temperature: t)
            lines += changes.lines(from: before, to: now)
            before = now
        }
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("health: the SoC is at 80.0 °C, at or over warn_temp_c 80.0"))
        #expect(lines[1] == "health: the SoC is back at 77.9 °C, under warn_temp_c 80.0")
        #expect(lines[2].hasPrefix("health: the SoC is at 80.2 °C"))
    }

    @Test func ntpTakingAndLosingTheClockIsTold() {
        var changes = HealthChanges(warnTemperature: 80)
        func clock(_ synchronized: Bool?) -> HealthReading {
            var r = reading()
            r.clockSynchronized = synchronized
            return r
        }
        #expect(changes.lines(from: nil, to: clock(false)).isEmpty)
        #expect(changes.lines(from: clock(false), to: clock(true)) == ["clock: synchronised by NTP: takes from now on have a confirmed time"])
        #expect(changes.lines(from: clock(true), to: clock(true)).isEmpty)
        #expect(changes.lines(from: clock(true), to: clock(false)).first?.hasPrefix("clock: NTP no longer disciplines the clock") == true)
        // Synchronised already at the first reading (stagebox restarted): nothing to tell; never asked.
        #expect(changes.lines(from: nil, to: clock(true)).isEmpty)
        #expect(changes.lines(from: clock(nil), to: clock(nil)).isEmpty)
        #expect(clock(true).summary.hasSuffix(", clock synchronised by NTP"))
        #expect(!clock(nil).summary.contains("clock"))
    }
}
