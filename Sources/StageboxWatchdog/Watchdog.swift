import CLinux
import StageboxSystem
import Synchronization
import SystemPackage

/// The kernel watchdog device: opening it arms it, every write feeds it, and writing `V`
/// just before closing disarms it (the magic close). Stagebox feeds it only while the audio
/// loop makes progress, so a stuck appliance resets.
public final class Watchdog: Sendable {
    public let path: String
    /// The open device until it is disarmed (then nil). A Mutex so that a feed on the control
    /// thread and the disarm at shutdown cannot cross (a feed on a closed, reused descriptor).
    private let device: Mutex<FileDescriptor?>

    /// Opens (and so arms) the watchdog at `path`.
    public init(path: String = "/dev/watchdog") throws(SystemCallError) {
        self.path = path
        let fd = try SystemCallError.naming("opening the watchdog", path) {
            try FileDescriptor.open(path, .writeOnly, options: .closeOnExec)
        }
        device = Mutex(fd)
    }

    deinit { device.withLock { try? $0?.close() } }

    /// Asks the driver for a timeout; returns the one it took (drivers round), or nil when it
    /// cannot change it (then the driver's own default or module parameter stands).
    public func setTimeout(seconds: Int) -> Int? {
        device.withLock { fd in
            guard let fd else { return nil }
            var value = Int32(seconds)
            return stagebox_watchdog_set_timeout(fd.rawValue, &value) == 0 ? Int(value) : nil
        }
    }

    /// Resets the watchdog's countdown.
    public func feed() { write(0x31) }

    /// Disarms and closes: a clean shutdown that must not reset the board.
    public func disarm() {
        device.withLock { fd in
            _ = try? fd?.writeAll([0x56]) // "V"
            try? fd?.close()
            fd = nil
        }
    }

    private func write(_ byte: UInt8) {
        device.withLock { fd in _ = try? fd?.writeAll([byte]) }
    }
}
