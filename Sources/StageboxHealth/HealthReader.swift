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
    /// Which files this board has, and where the under-voltage alarm and the SoC's zone are:
    /// looking costs a folder listing and a file a device, and a file the board lacks costs a
    /// failed open, every second, for devices a board has from boot. Looked for again after
    /// `discoveryIntervalNanos`, or at once when a found file stops reading.
    private var found: FoundFiles?
    private var foundAt: Int64 = 0
    public var discoveryIntervalNanos: Int64 = 60_000_000_000

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
        if found == nil || now - foundAt >= discoveryIntervalNanos { discover(now: now) }
        if !readFound(into: &reading) {
            reading = HealthReading()
            discover(now: now) // a device went (a module unloaded): look again, read again
            _ = readFound(into: &reading)
        }
        if lastAt.map({ now - $0 >= processIntervalNanos }) ?? true { busiest = busiestOtherProcess(now: now) }
        reading.busiest = busiest
        reading.clockSynchronized = clockSynchronized()
        return reading
    }

    /// CPU 0's cpufreq folder: its current clock and governor are read every second, its
    /// highest clock once a discovery (it is the hardware's).
    static let cpufreq = "devices/system/cpu/cpu0/cpufreq"

    /// The files found: the firmware's throttle word, the Pi's voltage monitor's alarm, the
    /// SoC's zone, CPU 0's cpufreq (with its highest clock in MHz, when it reads).
    private struct FoundFiles: Sendable {
        var throttle = false
        var voltageAlarm: String?
        var zone: (folder: String, type: String)?
        var cpufreq = false
        var maxFrequencyMHz: Int?
    }

    /// Looks for the files: the throttle word, CPU 0's cpufreq (its highest clock read now),
    /// the hwmon device named `rpi_volt`, and the SoC's thermal zone, the first whose type
    /// names the CPU or SoC (`cpu-thermal` on a Pi), else the first zone.
    private mutating func discover(now: Int64) {
        var f = FoundFiles()
        f.throttle = files.sysExists(Self.throttledFile)
        f.cpufreq = files.sysExists("\(Self.cpufreq)/scaling_cur_freq")
        f.maxFrequencyMHz = files.sys("\(Self.cpufreq)/cpuinfo_max_freq").flatMap(Int.init).map { $0 / 1000 }
        for hwmon in files.sysNames(in: "class/hwmon") where files.sys("class/hwmon/\(hwmon)/name") == Self.piVoltageMonitor {
            f.voltageAlarm = "class/hwmon/\(hwmon)/in0_lcrit_alarm"
        }
        let zones = files.sysNames(in: "class/thermal").filter { $0.hasPrefix("thermal_zone") }
        let typed = zones.map { ($0, files.sys("class/thermal/\($0)/type") ?? $0) }
        let soc = typed.first { z in ["cpu", "soc", "bcm2835"].contains { z.1.lowercased().contains($0) } } ?? typed.first
        f.zone = soc.map { (folder: "class/thermal/\($0.0)", type: $0.1) }
        found = f
        foundAt = now
    }

    /// Reads the files that were found: the throttle word, the alarm, the temperature
    /// (millidegrees in `temp`), the clock and governor; false when a found file did not open
    /// (a file that opens and holds no number is a value unknown, not a device gone).
    private func readFound(into reading: inout HealthReading) -> Bool {
        guard let found else { return true }
        var present = true
        if found.throttle {
            let text = files.sys(Self.throttledFile)
            present = present && text != nil
            reading.throttle = text.flatMap(ThrottleFlags.init(text:))
        }
        if found.cpufreq {
            let text = files.sys("\(Self.cpufreq)/scaling_cur_freq")
            present = present && text != nil
            reading.frequencyMHz = text.flatMap(Int.init).map { $0 / 1000 }
            reading.maxFrequencyMHz = found.maxFrequencyMHz
            reading.governor = files.sys("\(Self.cpufreq)/scaling_governor")
        }
        if let alarm = found.voltageAlarm {
            let text = files.sys(alarm)
            present = present && text != nil
            reading.underVoltageAlarm = text.flatMap(Int.init).map { $0 != 0 }
        }
        if let zone = found.zone {
            let text = files.sys("\(zone.folder)/temp")
            present = present && text != nil
            if let milli = text.flatMap(Int.init) {
                (reading.temperature, reading.temperatureZone) = (Double(milli) / 1000, zone.type)
            }
        }
        return present
    }

    /// The process other than stagebox that used the most CPU since the last reading. Each
    /// `stat` is parsed where it was read; only a new leader's name becomes a string.
    private mutating func busiestOtherProcess(now: Int64) -> BusyProcess? {
        var ticks: [Int: Int] = [:]
        ticks.reserveCapacity(lastTicks.count)
        var best: (pid: Int, name: String, delta: Int)?
        for entry in files.procNames(in: "") {
            guard let pid = Int(entry), pid != ownPid else { continue }
            let leader = lastTicks[pid]
            let parsed = files.procBytes("\(entry)/stat") { bytes -> (used: Int, name: String?)? in
                guard let stat = Self.parseStat(bytes) else { return nil }
                let leads = leader.map { stat.ticks - $0 > (best?.delta ?? 0) } ?? false
                return (stat.ticks, leads ? String(decoding: bytes[stat.name], as: UTF8.self) : nil)
            }
            guard let parsed = parsed ?? nil else { continue }
            ticks[pid] = parsed.used
            if let name = parsed.name, let before = leader { best = (pid, name, parsed.used - before) }
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
        var utf8 = Array(text.utf8)
        return utf8.withUnsafeMutableBufferPointer { buffer in
            let bytes = UnsafeBufferPointer(buffer)
            return parseStat(bytes).map { (String(decoding: bytes[$0.name], as: UTF8.self), $0.ticks) }
        }
    }

    /// The same, on the bytes of the file: where the name lies, and the ticks.
    static func parseStat(_ bytes: UnsafeBufferPointer<UInt8>) -> (name: Range<Int>, ticks: Int)? {
        let openParen = UInt8(ascii: "("), closeParen = UInt8(ascii: ")"), space = UInt8(ascii: " ")
        guard let open = bytes.firstIndex(of: openParen), let close = bytes.lastIndex(of: closeParen),
              open < close else { return nil }
        // After the name: " S ppid ..." — field k (0 = the state) starts after the (k+1)th space.
        var field = -1, i = close + 1, user = 0, system = 0
        while i < bytes.count, field <= 12 {
            if bytes[i] == space {
                field += 1
                i += 1
                continue
            }
            guard field == 11 || field == 12 else { i += 1; continue }
            var value = 0, digits = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, digits < 18 {
                value = value * 10 + Int(bytes[i] - 0x30)
                digits += 1
                i += 1
            }
            guard digits > 0, i == bytes.count || bytes[i] == space || bytes[i] == 0x0A else { return nil }
            if field == 11 { user = value } else { system = value }
            if field == 12 { return (open + 1..<close, user + system) }
        }
        return nil
    }
}
