import CLinux
import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One end of the wakeup between the audio thread and a client: a Unix datagram socketpair,
/// one byte a wakeup.
///
/// Not an eventfd: a descriptor passed to a client shares its open file with the server, flags
/// included, so a client could clear `O_NONBLOCK` on an eventfd, fill its counter, and make the
/// audio thread's next wakeup block. The two ends of a socketpair are separate open files, and
/// this end sends and receives with `MSG_DONTWAIT` whatever anyone did to the flags: a wakeup
/// never waits, and a client that reads none only loses wakeups.
public final class Wakeup: Sendable {
    /// The raw descriptor: the audio thread's calls take it as it is, with nothing around them.
    public let descriptor: Int32

    /// A new pair: this end, and the other end for the client (closed once sent, or on any
    /// way out before).
    public static func pair() throws(RingError) -> (Wakeup, OwnedDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard stagebox_wakeup_pair(&fds) == 0 else { throw .system(.last("making a wakeup socketpair")) }
        return (Wakeup(adopting: FileDescriptor(rawValue: fds[0])), OwnedDescriptor(FileDescriptor(rawValue: fds[1])))
    }

    /// Adopts a descriptor: this closes it from now on.
    public init(adopting fd: FileDescriptor) { descriptor = fd.rawValue }

    deinit { try? FileDescriptor(rawValue: descriptor).close() }

    /// Wakes the other side. One system call; never blocks (a full socket drops the wakeup:
    /// the other side has plenty pending already).
    @inline(__always)
    public func signal() { _ = stagebox_wakeup_send(descriptor) }

    /// Takes pending wakeups (at most 64 of them: a flood cannot hold the caller).
    public func drain() {
        for _ in 0..<64 where stagebox_wakeup_take(descriptor) == 1 {}
    }

    /// Waits until signalled or `timeoutNanos` passes (negative: forever). True if signalled.
    public func wait(timeoutNanos: Int64) -> Bool {
        var fd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let rc = stagebox_poll_ns(&fd, 1, timeoutNanos)
        if rc > 0 { drain(); return true }
        return false
    }
}
