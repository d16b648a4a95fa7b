/// What the board's health looked like at one moment: every part is nil where the kernel does
/// not show it (no `raspberrypi-hwmon`, no thermal zone, no cpufreq on this board or kernel).
public struct HealthReading: Sendable, Equatable {
    /// `raspberrypi-hwmon`'s `in0_lcrit_alarm`: under-voltage seen by the firmware.
    public var underVoltageAlarm: Bool?
    /// The firmware's throttle word, where the kernel shows it (`get_throttled`).
    public var throttle: ThrottleFlags?
    /// The SoC's temperature (°C) and the thermal zone it came from.
    public var temperature: Double?
    public var temperatureZone: String?
    /// CPU 0's frequency now and at most (MHz), and its governor.
    public var frequencyMHz: Int?
    public var maxFrequencyMHz: Int?
    public var governor: String?
    /// The busiest process other than stagebox over the last reading's interval.
    public var busiest: BusyProcess?
    /// Whether NTP disciplines the clock (the kernel's clock state); nil where not asked.
    public var clockSynchronized: Bool?

    public init() {}

    /// Under-voltage now, from whichever source the kernel gives.
    public var underVoltage: Bool? {
        if let throttle { return throttle.contains(.underVoltage) || underVoltageAlarm == true }
        return underVoltageAlarm
    }

    /// Throttling now (the firmware lowered the clock: heat, or a weak supply).
    public var throttled: Bool? {
        throttle.map { $0.contains(.throttled) || $0.contains(.frequencyCapped) || $0.contains(.softTemperatureLimit) }
    }

    /// One line: what is known, in words ("52.6 °C (cpu-thermal), 1500 of 1800 MHz ondemand,
    /// power good, not throttled, busiest other: ffmpeg 35 %").
    public var summary: String {
        parts.isEmpty ? "nothing to read on this board" : parts.joined(separator: ", ")
    }

    /// What `summary` is made of; empty when nothing is known.
    public var parts: [String] {
        var parts: [String] = []
        if let temperature {
            parts.append("\(Self.tenths(temperature)) °C" + (temperatureZone.map { " (\($0))" } ?? ""))
        }
        if let frequencyMHz {
            let of = maxFrequencyMHz.map { " of \($0)" } ?? ""
            parts.append("\(frequencyMHz)\(of) MHz" + (governor.map { " \($0)" } ?? ""))
        }
        if let underVoltage { parts.append(underVoltage ? "UNDER-VOLTAGE" : "power good") }
        if let throttle {
            let now = throttle.nowWords.filter { $0 != "under-voltage" }
            parts.append(now.isEmpty ? "not throttled" : now.joined(separator: ", ").uppercased())
            let before = throttle.sinceBootWords
            if !before.isEmpty { parts.append("since boot: " + before.joined(separator: ", ")) }
        }
        if let busiest { parts.append("busiest other: \(busiest.name) \(busiest.percent) %") }
        if let clockSynchronized { parts.append(clockSynchronized ? "clock synchronised by NTP" : "clock not synchronised") }
        return parts
    }

    static func tenths(_ value: Double) -> String {
        let t = Int((value * 10).rounded())
        return "\(t < 0 && t > -10 ? "-" : "")\(t / 10).\(abs(t % 10))"
    }
}

/// A process and the share of one CPU it used over an interval.
public struct BusyProcess: Sendable, Equatable {
    public var pid: Int
    public var name: String
    /// Percent of one CPU (a busy two-thread process can show 200).
    public var percent: Int

    public init(pid: Int, name: String, percent: Int) {
        self.pid = pid
        self.name = name
        self.percent = percent
    }
}
