#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads the board's health from sysfs and procfs: the Pi firmware's under-voltage and
/// throttle flags, the SoC's temperature, CPU 0's clock, and the busiest other process (from
/// the CPU times it keeps between two readings). Never on the audio thread: it opens files.
public struct HealthReader: Sendable {
    public let files: SystemFiles
    /// Left out of the busiest: stagebox itself.
    let ownPid: Int
    let ticksPerSecond: Int
    private var lastTicks: [Int: Int] = [:]
    private var lastAt: Int64?
    private var busiest: BusyProcess?
    /// The processes are scanned at most this often (a file each: the costly part of a
    /// reading); between scans a reading repeats the last scan's busiest.
    public var processIntervalNanos: Int64 = 5_000_000_000
    /// Whether NTP disciplines the clock (not a file: the kernel's clock state); nil leaves it
    /// out of the reading.
    let clockSynchronized: @Sendable () -> Bool?

    public init(files: SystemFiles, ownPid: Int = Int(getpid()), clockSynchronized: @escaping @Sendable () -> Bool? = { nil }) {
        self.files = files
        self.ownPid = ownPid
        self.clockSynchronized = clockSynchronized
        ticksPerSecond = max(1, sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Raspberry Pi OS kernels show the firmware's throttle word here; mainline ones do not.
    static let throttledFile = "devices/platform/soc/soc:firmware/get_throttled"
    /// `raspberrypi-hwmon` registers a hwmon device of this name with `in0_lcrit_alarm`.
    static let piVoltageMonitor = "rpi_volt"

    /// One reading at monotonic time `now` (nanoseconds).
    public mutating func read(now: Int64) -> HealthReading {
        var reading = HealthReading()
        reading.throttle = files.sys(Self.throttledFile).flatMap(ThrottleFlags.init(text:))
        for hwmon in files.sysNames(in: "class/hwmon") where files.sys("class/hwmon/\(hwmon)/name") == Self.piVoltageMonitor {
            reading.underVoltageAlarm = files.sys("class/hwmon/\(hwmon)/in0_lcrit_alarm").flatMap(Int.init).map { $0 != 0 }
        }
        (reading.temperature, reading.temperatureZone) = socTemperature()
        let cpufreq = "devices/system/cpu/cpu0/cpufreq"
        reading.frequencyMHz = files.sys("\(cpufreq)/scaling_cur_freq").flatMap(Int.init).map { $0 / 1000 }
        reading.maxFrequencyMHz = files.sys("\(cpufreq)/cpuinfo_max_freq").flatMap(Int.init).map { $0 / 1000 }
        reading.governor = files.sys("\(cpufreq)/scaling_governor")
        if lastAt.map({ now - $0 >= processIntervalNanos }) ?? true { busiest = busiestOtherProcess(now: now) }
        reading.busiest = busiest
        reading.clockSynchronized = clockSynchronized()
        return reading
    }

    /// The SoC's zone: the first whose type names the CPU or SoC (`cpu-thermal` on a Pi),
    /// else the first zone; millidegrees in `temp`.
    private func socTemperature() -> (Double?, String?) {
        let zones = files.sysNames(in: "class/thermal").filter { $0.hasPrefix("thermal_zone") }
        let typed = zones.map { ($0, files.sys("class/thermal/\($0)/type") ?? $0) }
        let soc = typed.first { z in ["cpu", "soc", "bcm2835"].contains { z.1.lowercased().contains($0) } } ?? typed.first
        guard let (zone, type) = soc, let milli = files.sys("class/thermal/\(zone)/temp").flatMap(Int.init) else {
            return (nil, nil)
        }
        return (Double(milli) / 1000, type)
    }

    /// The process other than stagebox that used the most CPU since the last reading.
    private mutating func busiestOtherProcess(now: Int64) -> BusyProcess? {
        var ticks: [Int: Int] = [:]
        var best: (pid: Int, name: String, delta: Int)?
        for entry in files.procNames(in: "") {
            guard let pid = Int(entry), pid != ownPid, let stat = files.proc("\(entry)/stat"),
                  let (name, used) = Self.parseStat(stat) else { continue }
            ticks[pid] = used
            if let before = lastTicks[pid], used - before > (best?.delta ?? 0) { best = (pid, name, used - before) }
        }
        defer {
            lastTicks = ticks
            lastAt = now
        }
        guard let lastAt, now > lastAt, let best else { return nil }
        let seconds = Double(now - lastAt) / 1e9
        let percent = Int((Double(best.delta) / Double(ticksPerSecond) / seconds * 100).rounded())
        return BusyProcess(pid: best.pid, name: best.name, percent: percent)
    }

    /// `/proc/PID/stat`: the name between the first `(` and the last `)` (it may hold spaces
    /// and parentheses), then fields from the state on; user + system time are the 12th and
    /// 13th after the name. Nil for a line that is not that shape.
    static func parseStat(_ text: String) -> (name: String, ticks: Int)? {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return nil }
        let name = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return (name, user + system)
    }
}
