import Foundation
import StageboxClock
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `[clock] rtc`: the chip declared to the kernel and its RTC found, on a tree laid out as
/// /sys is (the reading itself needs a real RTC: the VM rig's clock-rtc scenario).
@Suite struct RealTimeClockTests {
    private func tree() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-rtc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func rtc(_ sysfs: String, chip: String = "ds3231", bus: Int = 1, address: Int = 0x68) -> RealTimeClock {
        var rtc = RealTimeClock(chip: chip, bus: bus, address: address)
        rtc.sysfs = sysfs
        rtc.bindTimeoutNanos = 200_000_000
        return rtc
    }

    @Test func theKernelsNameOfTheChipIsBusDashFourHexDigits() {
        #expect(RealTimeClock(chip: "ds3231", bus: 1, address: 0x68).deviceName == "1-0068")
        #expect(RealTimeClock(chip: "mcp7940x", bus: 11, address: 0x6f).deviceName == "11-006f")
    }

    @Test func anRTCTheDriverRegisteredIsUsedAsItIs() throws {
        let sys = try tree()
        defer { try? FileManager.default.removeItem(atPath: sys) }
        try FileManager.default.createDirectory(atPath: sys + "/bus/i2c/devices/1-0068/rtc/rtc1", withIntermediateDirectories: true)
        #expect(try rtc(sys).attach() == "/dev/rtc1")
    }

    @Test func aChipTheKernelDoesNotKnowIsDeclaredOnItsBus() throws {
        let sys = try tree()
        defer { try? FileManager.default.removeItem(atPath: sys) }
        let bus = sys + "/bus/i2c/devices/i2c-1"
        try FileManager.default.createDirectory(atPath: bus, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: bus + "/new_device", contents: Data()))
        // The "driver": registers the RTC once the chip is declared, as rtc-ds1307 does.
        let registered = Thread {
            for _ in 0..<100 where (try? String(contentsOfFile: bus + "/new_device", encoding: .utf8))?.isEmpty != false {
                usleep(5_000)
            }
            try? FileManager.default.createDirectory(atPath: sys + "/bus/i2c/devices/1-0068/rtc/rtc0", withIntermediateDirectories: true)
        }
        registered.start()
        #expect(try rtc(sys).attach() == "/dev/rtc0")
        #expect(try String(contentsOfFile: bus + "/new_device", encoding: .utf8) == "ds3231 0x68\n")
    }

    @Test func eachFailureNamesTheSettingAndWhy() throws {
        let sys = try tree()
        defer { try? FileManager.default.removeItem(atPath: sys) }
        #expect(throws: RealTimeClock.Failure(description: "[clock] rtc = \"ds3231\" (I2C bus 1, address 0x68): the kernel has no I2C bus 1 (\(sys)/bus/i2c/devices/i2c-1): is I2C on, and its driver loaded?")) {
            try rtc(sys).attach()
        }
        let bus = sys + "/bus/i2c/devices/i2c-1"
        try FileManager.default.createDirectory(atPath: bus, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: bus + "/new_device", contents: Data()))
        #expect(throws: RealTimeClock.Failure(description: "[clock] rtc = \"ds3231\" (I2C bus 1, address 0x68): no RTC registered within 200 ms: no chip answers at that address, or rtc-ds1307 is not loaded")) {
            try rtc(sys).attach()
        }
        // A device node that is not an RTC: the ioctl fails, and the error says where.
        #expect(throws: RealTimeClock.Failure.self) { try rtc(sys).read("/dev/null") }
    }

    /// A keeper whose RTC cannot be attached says why, and does not count the RTC as confirming.
    @Test func anRTCThatCannotBeAttachedIsReportedAndConfirmsNothing() throws {
        let sys = try tree()
        defer { try? FileManager.default.removeItem(atPath: sys) }
        var settings = ClockKeeper.Settings(file: "", folders: [])
        settings.sysfs = sys
        settings.rtc = rtc(sys)
        let keeper = ClockKeeper(settings, setClock: { _ in nil }) { _ in }
        #expect(keeper.rtcLine?.hasPrefix("clock: [clock] rtc = \"ds3231\" (I2C bus 1, address 0x68): the kernel has no I2C bus 1") == true)
        #expect(!keeper.rtcConfirmed)
    }
}
