#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux

/// The kernel watchdog device: opening it arms it, every write feeds it, and writing `V`
/// just before closing disarms it (the magic close). Stagebox feeds it only while the audio
/// loop makes progress, so a stuck appliance resets.
public final class Watchdog: @unchecked Sendable {
    public let path: String
    private var fd: Int32

    public struct OpenError: Error, CustomStringConvertible {
        public var path: String
        public var code: Int32
        public var description: String { "cannot open watchdog \(path): \(String(cString: strerror(code)))" }
    }

    /// Opens (and so arms) the watchdog at `path`.
    public init(path: String = "/dev/watchdog") throws(OpenError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw OpenError(path: path, code: errno) }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Asks the driver for a timeout; returns the one it took (drivers round), or nil when it
    /// cannot change it (then the driver's own default or module parameter stands).
    public func setTimeout(seconds: Int) -> Int? {
        guard fd >= 0 else { return nil }
        var value = Int32(seconds)
        return stagebox_watchdog_set_timeout(fd, &value) == 0 ? Int(value) : nil
    }

    /// Resets the watchdog's countdown.
    public func feed() {
        guard fd >= 0 else { return }
        var byte: UInt8 = 0x31
        _ = write(fd, &byte, 1)
    }

    /// Disarms and closes: a clean shutdown that must not reset the board.
    public func disarm() {
        guard fd >= 0 else { return }
        var v: UInt8 = 0x56 // "V"
        _ = write(fd, &v, 1)
        close(fd)
        fd = -1
    }

}
