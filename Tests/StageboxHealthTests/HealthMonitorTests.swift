import StageboxHealth
import StageboxTestSupport
import StageboxSystem
import Synchronization
import Testing

@Suite struct HealthMonitorTests {
    /// The thread reads every second; flags flipped in the tree while it runs are logged, and
    /// the reading seen by `latest` follows. The delay is printed, not judged (a shared machine).
    @Test func flagsFlippedWhileRunningAreTold() throws {
        let tree = try BoardTree.pi4()
        let told = Mutex<[(Int64, String)]>([])
        let monitor = try HealthMonitor(files: tree.files, warnTemperature: 80) { line in
            told.withLock { $0.append((monotonicNanoseconds(), line)) }
        }
        try monitor.start()
        defer { monitor.stop() }
        #expect(waitFor(30) { monitor.latest != nil })
        #expect(monitor.latest?.underVoltage == false)

        let flipped = monotonicNanoseconds()
        try tree.write("sys/devices/platform/soc/soc:firmware/get_throttled", "0x50005")
        try tree.write("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "1")
        #expect(waitFor(30) { told.withLock { $0.count } >= 2 })
        let lines = told.withLock { $0 }
        #expect(lines.contains { $0.1.hasPrefix("health: UNDER-VOLTAGE") })
        #expect(lines.contains { $0.1.hasPrefix("health: throttling started (throttled)") })
        if let first = lines.first {
            print("health: the flags flipped were told \(Double(first.0 - flipped) / 1e6) ms later (interval 1 s)")
        }
        #expect(monitor.latest?.summary.contains("UNDER-VOLTAGE") == true)

        try tree.write("sys/devices/platform/soc/soc:firmware/get_throttled", "0x50000")
        try tree.write("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "0")
        #expect(waitFor(30) { told.withLock { $0.count } >= 4 })
        #expect(monitor.history.map(\.line).suffix(2).sorted()
            == ["health: throttling stopped; CPU 0 at 1500 of 1800 MHz", "health: under-voltage gone: the supply is good again"])
    }

    @Test func theHistoryKeepsTheLastChanges() throws {
        let tree = try BoardTree.pi4()
        let monitor = try HealthMonitor(files: tree.files, warnTemperature: 80) { _ in }
        for i in 0..<(HealthMonitor.historyLength + 10) {
            try tree.write("sys/class/hwmon/hwmon1/in0_lcrit_alarm", i % 2 == 0 ? "1" : "0")
            monitor.readOnce()
        }
        #expect(monitor.history.count == HealthMonitor.historyLength)
        #expect(monitor.readings == HealthMonitor.historyLength + 10)
    }

    /// NTP's hold on the clock, as the kernel tells it, read with the rest and told on change.
    @Test func theClockStateIsReadAndItsChangeTold() throws {
        let tree = try BoardTree.pi4()
        let synchronized = Atomic(false)
        let told = Mutex<[String]>([])
        let monitor = try HealthMonitor(files: tree.files, warnTemperature: 80,
                                        clockSynchronized: { synchronized.load(ordering: .relaxed) }) { line in
            told.withLock { $0.append(line) }
        }
        monitor.readOnce()
        #expect(monitor.latest?.summary.hasSuffix("clock not synchronised") == true)
        synchronized.store(true, ordering: .relaxed)
        monitor.readOnce()
        #expect(told.withLock { $0 } == ["clock: synchronised by NTP: takes from now on have a confirmed time"])
        #expect(monitor.latest?.summary.hasSuffix("clock synchronised by NTP") == true)
    }
}
