import Foundation
import StageboxTestSupport
import Testing

/// Health in `stagebox run` as an owner meets it: the sysfs and procfs of a recorded Pi 4
/// (`STAGEBOX_SYSFS_ROOT`, `STAGEBOX_PROCFS_ROOT`), flags flipped while it runs, the log line,
/// `status` and `health` at the console.
@Suite(.serialized) struct HealthRunTests {
    @Test func underVoltageWhileRunningIsLoggedAndShown() throws {
        let tree = try BoardTree.pi4()
        try tree.process(4242, "ffmpeg", userTicks: 100)
        let board = try SimulatedBoard(environment: ["STAGEBOX_SYSFS_ROOT": tree.root + "/sys",
                                                     "STAGEBOX_PROCFS_ROOT": tree.root + "/proc"])
        func console(_ line: String) -> String { (try? board.stagebox(["console", "--execute", line]).stdout) ?? "" }
        #expect(waitFor(30) { console("status").contains("health      52.6 °C (cpu-thermal), 1500 of 1800 MHz ondemand, power good, not throttled") },
                "\(console("status"))")
        try tree.process(4242, "ffmpeg", userTicks: 100_000) // far more than one CPU could: the busiest
        try tree.write("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "1")
        #expect(waitFor(30) { console("health").contains("health: UNDER-VOLTAGE") }, "\(console("health"))")
        #expect(waitFor(30) { console("status").contains("busiest other: ffmpeg") }, "\(console("status"))")
        try tree.write("sys/class/hwmon/hwmon1/in0_lcrit_alarm", "0")
        #expect(waitFor(30) { console("health").contains("health: under-voltage gone") }, "\(console("health"))")
        let log = board.stop()
        #expect(log.contains("health: UNDER-VOLTAGE: the supply sags below what the Pi needs"), "\(log)")
        #expect(log.contains("health: under-voltage gone: the supply is good again"), "\(log)")
    }
}
