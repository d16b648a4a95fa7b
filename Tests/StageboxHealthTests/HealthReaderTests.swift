@testable import StageboxHealth
import StageboxSystem
#if canImport(Glibc)
import Glibc
#endif
import StageboxTestSupport
import Testing

@Suite struct HealthReaderTests {
    @Test func aPi4OnRaspberryPiOSShowsEverything() throws {
        let tree = try BoardTree.pi4()
        var reader = HealthReader(files: tree.files, ownPid: 1)
        let r = reader.read(now: 0)
        #expect(r.temperature == 52.582)
        #expect(r.temperatureZone == "cpu-thermal")
        #expect(r.frequencyMHz == 1500 && r.maxFrequencyMHz == 1800 && r.governor == "ondemand")
        #expect(r.underVoltageAlarm == false && r.throttle == [])
        #expect(r.underVoltage == false && r.throttled == false)
        #expect(r.summary == "52.6 °C (cpu-thermal), 1500 of 1800 MHz ondemand, power good, not throttled")
    }

    @Test func aPi3OnDebiansKernelHasNoThrottleWordAndTheCPUZoneIsChosen() throws {
        let tree = try BoardTree.pi3()
        var reader = HealthReader(files: tree.files, ownPid: 1)
        let r = reader.read(now: 0)
        #expect(r.temperatureZone == "cpu-thermal" && r.temperature == 48.312)
        #expect(r.throttle == nil && r.throttled == nil)
        #expect(r.underVoltage == false)
        #expect(r.summary == "48.3 °C (cpu-thermal), 600 of 1200 MHz schedutil, power good")
        try tree.write("sys/class/hwmon/hwmon0/in0_lcrit_alarm", "1")
        #expect(reader.read(now: 1).underVoltage == true)
    }

    /// The devices are looked for once a minute, not every second: one that appears later is
    /// found at the next look; one that goes is looked for again at once.
    @Test func devicesAreLookedForOnceAMinuteAndAgainWhenOneGoes() throws {
        let tree = try BoardTree()
        try tree.write("sys/class/thermal/thermal_zone0/type", "cpu-thermal")
        try tree.write("sys/class/thermal/thermal_zone0/temp", "40000")
        var reader = HealthReader(files: tree.files, ownPid: 1)
        #expect(reader.read(now: 0).underVoltageAlarm == nil)
        try tree.write("sys/class/hwmon/hwmon3/name", "rpi_volt") // a module loaded late
        try tree.write("sys/class/hwmon/hwmon3/in0_lcrit_alarm", "1")
        #expect(reader.read(now: 1_000_000_000).underVoltageAlarm == nil, "not looked for yet")
        #expect(reader.read(now: 60_000_000_000).underVoltageAlarm == true, "found at the next look")
        // The zone goes and another comes: the next reading looks again and reads the new one.
        #expect(unlink(tree.root + "/sys/class/thermal/thermal_zone0/temp") == 0)
        #expect(unlink(tree.root + "/sys/class/thermal/thermal_zone0/type") == 0)
        #expect(rmdir(tree.root + "/sys/class/thermal/thermal_zone0") == 0)
        try tree.write("sys/class/thermal/thermal_zone1/type", "cpu-thermal")
        try tree.write("sys/class/thermal/thermal_zone1/temp", "41500")
        let r = reader.read(now: 61_000_000_000)
        #expect(r.temperature == 41.5 && r.temperatureZone == "cpu-thermal")
        #expect(r.underVoltageAlarm == true)
    }

    /// A file the board lacks is not opened every second (a failed open each, in a VM or on a
    /// mainline kernel): the throttle word and cpufreq are looked for with the devices.
    @Test func filesTheBoardLacksAreLookedForWithTheDevices() throws {
        let tree = try BoardTree()
        var reader = HealthReader(files: tree.files, ownPid: 1)
        #expect(reader.read(now: 0) == HealthReading())
        try tree.write("sys/devices/platform/soc/soc:firmware/get_throttled", "0x50000")
        try tree.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "600000")
        try tree.write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "1200000")
        try tree.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "schedutil")
        #expect(reader.read(now: 59_000_000_000) == HealthReading(), "not looked for yet")
        let r = reader.read(now: 60_000_000_000)
        #expect(r.throttle == [.underVoltageOccurred, .throttledOccurred])
        #expect(r.frequencyMHz == 600 && r.maxFrequencyMHz == 1200 && r.governor == "schedutil")
        // The highest clock is read at a discovery; the current one and the governor each time.
        try tree.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1200000")
        try tree.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance")
        #expect(reader.read(now: 61_000_000_000).frequencyMHz == 1200)
        #expect(reader.read(now: 61_000_000_000).governor == "performance")
        // The throttle word goes (a firmware driver unloaded): looked for again at once.
        #expect(unlink(tree.root + "/sys/devices/platform/soc/soc:firmware/get_throttled") == 0)
        let gone = reader.read(now: 62_000_000_000)
        #expect(gone.throttle == nil && gone.frequencyMHz == 1200)
    }

    @Test func aBoardWithoutThoseFilesReadsAsNothingKnown() throws {
        let tree = try BoardTree()
        var reader = HealthReader(files: tree.files, ownPid: 1)
        let r = reader.read(now: 0)
        #expect(r == HealthReading())
        #expect(r.summary == "nothing to read on this board")
    }

    @Test func garbageInAFileIsNoValueNotACrash() throws {
        let tree = try BoardTree.pi4()
        try tree.write("sys/class/thermal/thermal_zone0/temp", "hot")
        try tree.write("sys/devices/platform/soc/soc:firmware/get_throttled", "0xZZ")
        try tree.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "")
        try tree.write("proc/77/stat", "77 no parentheses here")
        var reader = HealthReader(files: tree.files, ownPid: 1)
        let r = reader.read(now: 0)
        #expect(r.temperature == nil && r.throttle == nil && r.frequencyMHz == nil)
        #expect(r.maxFrequencyMHz == 1800)
    }

    @Test func theBusiestOtherProcessComesFromTwoReadings() throws {
        let tree = try BoardTree()
        try tree.process(100, "ffmpeg", userTicks: 1000)
        try tree.process(200, "kworker/0:1-events", userTicks: 50)
        try tree.process(300, "stagebox", userTicks: 5000) // itself: never the busiest
        var reader = HealthReader(files: tree.files, ownPid: 300)
        reader.processIntervalNanos = 1_000_000_000
        #expect(reader.read(now: 0).busiest == nil) // one reading is no interval
        try tree.process(100, "ffmpeg", userTicks: 1030, systemTicks: 5)
        try tree.process(200, "kworker/0:1-events", userTicks: 60)
        try tree.process(300, "stagebox", userTicks: 9000)
        // 35 ticks in one second, at the kernel's USER_HZ of 100.
        let busiest = try #require(reader.read(now: 1_000_000_000).busiest)
        #expect(busiest == BusyProcess(pid: 100, name: "ffmpeg", percent: 35))
        // Before the next scan is due, a reading repeats it (the scan is a file a process).
        try tree.process(200, "kworker/0:1-events", userTicks: 500)
        #expect(reader.read(now: 1_500_000_000).busiest == busiest)
        #expect(reader.read(now: 2_000_000_000).busiest == BusyProcess(pid: 200, name: "kworker/0:1-events", percent: 440))
    }

    @Test func aProcessNameWithSpacesAndParenthesesIsRead() {
        let parsed = HealthReader.parseStat("42 (a (weird) name) R 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0")
        #expect(parsed?.name == "a (weird) name" && parsed?.ticks == 10)
        #expect(HealthReader.parseStat("42 (short) R 1") == nil)
        #expect(HealthReader.parseStat("42 (x) R 1 42 42 0 -1 0 0 0 0 0 -7 3 0") == nil, "a negative time")
        #expect(HealthReader.parseStat("42 (x) R 1 42 42 0 -1 0 0 0 0 0 7 3\n")?.ticks == 10, "the line's end")
        #expect(HealthReader.parseStat("42 (x) R 1 42 42 0 -1 0 0 0 0 0 7x 3 0") == nil)
    }
}

@Suite struct HealthOnThisMachineTests {
    /// The real `/sys` and `/proc` of the machine the tests run on: a reading works, and its
    /// cost (the health thread takes one a second) is printed, not judged.
    @Test func readingTheRealFilesWorksAndItsCostIsPrinted() {
        var reader = HealthReader(files: SystemFiles())
        _ = reader.read(now: monotonicNanoseconds())
        let before = threadCPUNanos()
        reader.processIntervalNanos = 0 // every reading scans the processes: the costly case
        let count = 20
        var last = HealthReading()
        for _ in 0..<count { last = reader.read(now: monotonicNanoseconds()) }
        let after = threadCPUNanos()
        let processes = Folder.names(in: "/proc").filter { Int($0) != nil }.count
        print("health on this machine: \(last.summary); \(Double(after - before) / Double(count) / 1e6) ms of CPU a reading with a scan of \(processes) processes (one in five readings scans them)")
        #expect(processes > 1)
    }
}

/// The CPU time this thread has used.
private func threadCPUNanos() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}
