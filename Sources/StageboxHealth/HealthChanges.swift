/// What changed between two readings that an owner must hear of: under-voltage seen or gone,
/// throttling started or stopped, the temperature over the warning or back under it (2 °C
/// lower, so a value hovering at the limit does not repeat itself every second), NTP starting
/// or ceasing to discipline the clock.
public struct HealthChanges: Sendable {
    public let warnTemperature: Double
    private var hot = false

    public init(warnTemperature: Double) {
        self.warnTemperature = warnTemperature
    }

    /// The lines for `now` after `before` (nil: the first reading, which tells only what is wrong).
    public mutating func lines(from before: HealthReading?, to now: HealthReading) -> [String] {
        var lines: [String] = []
        let wasUnder = before?.underVoltage ?? false, isUnder = now.underVoltage ?? false
        if isUnder && !wasUnder {
            lines.append("health: UNDER-VOLTAGE: the supply sags below what the Pi needs; the firmware slows the CPU and dropouts follow (a 5.1 V supply of the board's rating fixes it)")
        } else if wasUnder && !isUnder {
            lines.append("health: under-voltage gone: the supply is good again")
        }
        let wasThrottled = before?.throttled ?? false, isThrottled = now.throttled ?? false
        if isThrottled && !wasThrottled {
            let why = now.throttle?.nowWords.filter { $0 != "under-voltage" }.joined(separator: ", ") ?? ""
            lines.append("health: throttling started (\(why)): the CPU runs slower than asked" + clock(now))
        } else if wasThrottled && !isThrottled {
            lines.append("health: throttling stopped" + clock(now))
        }
        if let t = now.temperature {
            if !hot && t >= warnTemperature {
                hot = true
                lines.append("health: the SoC is at \(HealthReading.tenths(t)) °C, at or over warn_temp_c \(HealthReading.tenths(warnTemperature)) (a Pi's firmware throttles from 80 °C): give it air or a heatsink")
            } else if hot && t < warnTemperature - 2 {
                hot = false
                lines.append("health: the SoC is back at \(HealthReading.tenths(t)) °C, under warn_temp_c \(HealthReading.tenths(warnTemperature))")
            }
        }
        // Only a change: a clock already synchronised at the first reading is nothing to tell.
        if now.clockSynchronized == true && before?.clockSynchronized == false {
            lines.append("clock: synchronised by NTP: takes from now on have a confirmed time")
        } else if now.clockSynchronized == false && before?.clockSynchronized == true {
            lines.append("clock: NTP no longer disciplines the clock (network or server gone): it runs on from the time NTP gave")
        }
        return lines
    }

    private func clock(_ r: HealthReading) -> String {
        guard let f = r.frequencyMHz else { return "" }
        return "; CPU 0 at \(f)" + (r.maxFrequencyMHz.map { " of \($0)" } ?? "") + " MHz"
    }
}
