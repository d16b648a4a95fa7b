import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A serial device in raw mode (no echo, no line discipline): the console handles echo itself.
public final class SerialPort: Sendable {
    public let path: String
    public let descriptor: Int32

    public static let baudRates: [Int: speed_t] = [
        9600: speed_t(B9600), 19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600),
        115_200: speed_t(B115200), 230_400: speed_t(B230400), 460_800: speed_t(B460800), 921_600: speed_t(B921600),
    ]

    public init(path: String, baud: Int = 115_200) throws(SystemCallError) {
        self.path = path
        let file = try SystemCallError.naming("opening the serial port", path) {
            // O_NOCTTY: swift-system has no name for it; the console must not become our terminal.
            try FileDescriptor.open(path, .readWrite, options: [.closeOnExec, .nonBlocking,
                                                                FileDescriptor.OpenOptions(rawValue: O_NOCTTY)])
        }
        let fd = file.rawValue
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else {
            let error = SystemCallError.last("reading the terminal settings of", path)
            try? file.close()
            throw error
        }
        cfmakeraw(&t)
        // Every caller has checked `baud` against `baudRates` (the configuration's parser,
        // `diag serial-echo`), naming the allowed ones.
        let speed = Self.baudRates[baud] ?? speed_t(B115200)
        cfsetispeed(&t, speed)
        cfsetospeed(&t, speed)
        t.c_cflag |= tcflag_t(CLOCAL | CREAD)
        guard tcsetattr(fd, TCSANOW, &t) == 0 else {
            let error = SystemCallError.last("setting raw mode on", path)
            try? file.close()
            throw error
        }
        descriptor = fd
    }

    deinit { try? FileDescriptor(rawValue: descriptor).close() }

    /// Writes all of `text`, giving up on what does not fit within `timeoutMs` (a cable nobody reads).
    public func write(_ text: String, timeoutMs: Int32 = 200) {
        let bytes = Array(text.utf8)
        let file = FileDescriptor(rawValue: descriptor)
        var offset = 0
        while offset < bytes.count {
            do {
                // swift-system retries the write when a signal interrupts it.
                let n = try bytes[offset...].withUnsafeBytes { try file.write($0) }
                if n > 0 { offset += n; continue }
            } catch Errno.wouldBlock {
            } catch {
                return
            }
            var p = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            if poll(&p, 1, timeoutMs) <= 0 { return }
        }
    }

    /// Reads what is there, waiting up to `timeoutMs`; empty on timeout.
    public func read(timeoutMs: Int32) -> [UInt8] {
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeoutMs) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let file = FileDescriptor(rawValue: descriptor)
        let n = (try? buffer.withUnsafeMutableBytes { try file.read(into: $0) }) ?? 0
        return Array(buffer.prefix(n))
    }
}
