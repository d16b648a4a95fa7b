import CLinux
import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A battery-backed RTC chip on I2C (`[clock] rtc`), driven by the kernel's rtc-ds1307: a Pi
/// has none of its own, and a board with one should not wake up in 1970 after a power cut.
///
/// The card has no udev and its device trees no overlays, so the chip is declared the way the
/// kernel offers from user space: its name and address written to the bus's `new_device`.
/// The driver (loaded at boot) then registers `/dev/rtcN`, read and set with the RTC ioctls.
public struct RealTimeClock: Sendable, Equatable {
    public var chip: String
    public var bus: Int
    public var address: Int
    /// Where the kernel's files are (`/sys`; a test's tree), and its devices (`/dev`).
    public var sysfs = "/sys"
    public var devices = "/dev"
    /// How long the driver may take to register the RTC once the chip is declared.
    public var bindTimeoutNanos: Int64 = 2_000_000_000

    public init(chip: String, bus: Int, address: Int) {
        self.chip = chip
        self.bus = bus
        self.address = address
    }

    /// What went wrong, naming the setting and the device.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// The kernel's name of the chip's I2C device: BUS-00AA, the address in four hex digits.
    public var deviceName: String {
        let hex = String(address, radix: 16)
        return "\(bus)-" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private var what: String { "[clock] rtc = \"\(chip)\" (I2C bus \(bus), address 0x\(String(address, radix: 16)))" }

    /// The RTC's device (/dev/rtcN): the one the driver registered for the chip, declaring the
    /// chip first when the kernel does not know it yet.
    public func attach() throws(Failure) -> String {
        let device = "\(sysfs)/bus/i2c/devices/\(deviceName)"
        if let rtc = registeredRTC(device) { return rtc }
        if Folder.names(in: device).isEmpty {
            let bus = "\(sysfs)/bus/i2c/devices/i2c-\(self.bus)"
            guard !Folder.names(in: bus).isEmpty else {
                throw Failure(description: "\(what): the kernel has no I2C bus \(self.bus) (\(bus)): is I2C on, and its driver loaded?")
            }
            do throws(SystemCallError) {
                try Self.writeSysfs("\(chip) 0x\(String(address, radix: 16))\n", to: bus + "/new_device")
            } catch {
                throw Failure(description: "\(what): the chip cannot be declared: \(error)")
            }
        }
        let deadline = monotonicNanoseconds() + bindTimeoutNanos
        while true {
            if let rtc = registeredRTC(device) { return rtc }
            if monotonicNanoseconds() >= deadline { break }
            usleep(50_000)
        }
        throw Failure(description: "\(what): no RTC registered within \(bindTimeoutNanos / 1_000_000) ms: no chip answers at that address, or rtc-ds1307 is not loaded")
    }

    /// Reads the RTC's time (UTC, whole seconds).
    public func read(_ device: String) throws(Failure) -> Int64 {
        let fd = try open(device, .readOnly)
        defer { try? fd.close() }
        var seconds: Int64 = 0
        let result = stagebox_rtc_read(fd.rawValue, &seconds)
        guard result == 0 else {
            let reason = result == -EINVAL ? "the chip says its time is not valid (a flat battery, or never set)" : "\(Errno(rawValue: -result))"
            throw Failure(description: "\(what): reading \(device): \(reason)")
        }
        return seconds
    }

    /// Sets the RTC to `seconds` (UTC).
    public func set(_ device: String, to seconds: Int64) throws(Failure) {
        let fd = try open(device, .readOnly)
        defer { try? fd.close() }
        let result = stagebox_rtc_set(fd.rawValue, seconds)
        guard result == 0 else { throw Failure(description: "\(what): setting \(device): \(Errno(rawValue: -result))") }
    }

    private func open(_ device: String, _ mode: FileDescriptor.AccessMode) throws(Failure) -> FileDescriptor {
        do throws(SystemCallError) {
            return try SystemCallError.naming("opening", device) {
                try FileDescriptor.open(FilePath(device), mode, options: [.closeOnExec])
            }
        } catch {
            throw Failure(description: "\(what): \(error)")
        }
    }

    /// DEVICE/rtc/rtcN, as /dev/rtcN, when the driver has registered one.
    private func registeredRTC(_ device: String) -> String? {
        Folder.names(in: device + "/rtc").first { $0.hasPrefix("rtc") }.map { "\(devices)/\($0)" }
    }

    /// A sysfs attribute takes one write of its whole text, in place (no temporary file).
    private static func writeSysfs(_ text: String, to path: String) throws(SystemCallError) {
        let fd = try SystemCallError.naming("opening", path) {
            try FileDescriptor.open(FilePath(path), .writeOnly, options: [.closeOnExec])
        }
        defer { try? fd.close() }
        _ = try SystemCallError.naming("writing", path) { try fd.writeAll(Array(text.utf8)) }
    }
}
