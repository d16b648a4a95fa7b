import CLinux
import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An eventfd: the bus server's wakeup of its own thread (events raised on other threads).
public final class EventFD: Sendable {
    public let descriptor: FileDescriptor

    /// A new non-blocking, close-on-exec eventfd.
    public init() throws(RingError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .system(.last("making an eventfd")) }
        descriptor = FileDescriptor(rawValue: fd)
    }

    deinit { try? descriptor.close() }

    /// Wakes the other side. One write system call; never blocks (the counter saturates, not us).
    @inline(__always)
    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor.rawValue, &one, 8)
    }

    /// Takes every pending wakeup; returns how many there were (0 if none).
    @discardableResult
    public func drain() -> UInt64 {
        var n: UInt64 = 0
        return read(descriptor.rawValue, &n, 8) == 8 ? n : 0
    }

    /// Waits until signalled or `timeoutNanos` passes (negative: forever). Returns true if signalled.
    public func wait(timeoutNanos: Int64) -> Bool {
        var fd = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        let rc = stagebox_poll_ns(&fd, 1, timeoutNanos)
        if rc > 0 { drain(); return true }
        return false
    }
}
