import Foundation
import StageboxHealth

/// A folder laid out as `/sys` and `/proc` are, holding the files a real board's kernel shows
/// (values as read on the boards named; the layout is the kernel's documented one), which a
/// test can change while a reader runs.
public final class BoardTree {
    public let root: String
    public var files: SystemFiles { SystemFiles(sysfs: root + "/sys", procfs: root + "/proc") }

    public init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-health-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/sys", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/proc", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Writes `text` and a newline, as sysfs shows a value.
    public func write(_ path: String, _ text: String) throws {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try (text + "\n").write(toFile: full, atomically: true, encoding: .utf8)
    }

    /// A process in `/proc`: its `stat` line with `ticks` of user time and none of system time.
    public func process(_ pid: Int, _ name: String, userTicks: Int, systemTicks: Int = 0) throws {
        try write("proc/\(pid)/stat", "\(pid) (\(name)) S 1 \(pid) \(pid) 0 -1 4194304 812 0 3 0 \(userTicks) \(systemTicks) 0 0 20 0 1 0 4711 10485760 512 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 2 0 0 0 0 0")
    }

    /// A Raspberry Pi 4 B on Raspberry Pi OS's kernel: the firmware's throttle word, the
    /// `rpi_volt` hwmon, the CPU's thermal zone (also a hwmon), cpufreq at 1.5 of 1.8 GHz.
    public static func pi4() throws -> BoardTree {
        let tree = try BoardTree()
        try tree.write("sys/devices/platform/soc/soc:firmware/get_throttled", "0")
        try tree.write("sys/class/hwmon/hwmon0/name", "cpu_thermal")
        try tree.write("sys/class/hwmon/hwmon0/temp1_input", "52582")
        try tree.write("sys/class/hwmon/hwmon1/name", "rpi_volt")
        try tree.write("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "0")
        try tree.write("sys/class/thermal/thermal_zone0/type", "cpu-thermal")
        try tree.write("sys/class/thermal/thermal_zone0/temp", "52582")
        try tree.cpufreq(current: 1_500_000, max: 1_800_000, governor: "ondemand")
        return tree
    }

    /// A Raspberry Pi 3 B on Debian's arm64 kernel with `raspberrypi-hwmon` built: no throttle
    /// word (mainline does not show it), a GPU thermal zone before the CPU's, schedutil.
    public static func pi3() throws -> BoardTree {
        let tree = try BoardTree()
        try tree.write("sys/class/hwmon/hwmon0/name", "rpi_volt")
        try tree.write("sys/class/hwmon/hwmon0/in0_lcrit_alarm", "0")
        try tree.write("sys/class/thermal/thermal_zone0/type", "gpu-thermal")
        try tree.write("sys/class/thermal/thermal_zone0/temp", "44000")
        try tree.write("sys/class/thermal/thermal_zone1/type", "cpu-thermal")
        try tree.write("sys/class/thermal/thermal_zone1/temp", "48312")
        try tree.cpufreq(current: 600_000, max: 1_200_000, governor: "schedutil")
        return tree
    }

    public func cpufreq(current: Int, max: Int, governor: String) throws {
        try write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "\(current)")
        try write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "\(max)")
        try write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", governor)
    }
}
