#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A serial device in raw mode (no echo, no line discipline): the console handles echo itself.
public final class SerialPort: @unchecked Sendable {
    public let path: String
    public let descriptor: Int32

    public struct OpenError: Error, CustomStringConvertible {
        public var path: String
        public var what: String
        public var code: Int32
        public var description: String { "serial port \(path): \(what) failed: \(String(cString: strerror(code)))" }
    }

    public static let baudRates: [Int: speed_t] = [
        9600: speed_t(B9600), 19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600),
        115_200: speed_t(B115200), 230_400: speed_t(B230400), 460_800: speed_t(B460800), 921_600: speed_t(B921600),
    ]

    public init(path: String, baud: Int = 115_200) throws(OpenError) {
        self.path = path
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw OpenError(path: path, what: "open", code: errno) }
        descriptor = fd
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else { throw OpenError(path: path, what: "tcgetattr", code: errno) }
        cfmakeraw(&t)
        let speed = Self.baudRates[baud] ?? speed_t(B115200)
        cfsetispeed(&t, speed)
        cfsetospeed(&t, speed)
        t.c_cflag |= tcflag_t(CLOCAL | CREAD)
        guard tcsetattr(fd, TCSANOW, &t) == 0 else { throw OpenError(path: path, what: "tcsetattr", code: errno) }
    }

    deinit { close(descriptor) }

    /// Writes all of `text`, giving up on what does not fit within `timeoutMs` (a cable nobody reads).
    public func write(_ text: String, timeoutMs: Int32 = 200) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { posixWrite(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if n > 0 { offset += n; continue }
            if n < 0 && errno != EAGAIN && errno != EINTR { return }
            var p = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            if poll(&p, 1, timeoutMs) <= 0 { return }
        }
    }

    /// Reads what is there, waiting up to `timeoutMs`; empty on timeout.
    public func read(timeoutMs: Int32) -> [UInt8] {
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeoutMs) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { posixRead(descriptor, $0.baseAddress!, $0.count) }
        return n > 0 ? Array(buffer.prefix(n)) : []
    }
}

private func posixWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
private func posixRead(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int) -> Int { read(fd, p, n) }
