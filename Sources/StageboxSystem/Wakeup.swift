import CLinux
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A wakeup: one side signals, the other sleeps in poll(2) on `descriptor` until it comes. The
/// one wakeup type of Stagebox: a service thread's (signalled by other threads: a change, a
/// stop) and the audio thread's with each client.
///
/// Two kinds under one face. Within the process, an eventfd. Shared with a client, one end of
/// a Unix datagram socketpair, one byte a wakeup: a descriptor passed to a client shares its
/// open file with us, flags included, so a client could clear `O_NONBLOCK` on an eventfd, fill
/// its counter, and make the audio thread's next signal block. The two ends of a socketpair are
/// separate open files, and this end sends and receives with `MSG_DONTWAIT` whatever anyone
/// did to the flags: a signal never waits, and a client that reads none only loses wakeups.
public final class Wakeup: Sendable {
    /// The raw descriptor: the audio thread's calls take it as it is, with nothing around them.
    public let descriptor: Int32
    private let sharedWithAPeer: Bool

    /// A wakeup within this process (an eventfd). `purpose` names it in the error: "making the
    /// wakeup for the LED thread: …".
    public init(purpose: String) throws(SystemCallError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .last("making the wakeup for", purpose) }
        descriptor = fd
        sharedWithAPeer = false
    }

    /// A new pair to share with a peer: this end, and the other end for the peer (closed once
    /// sent, or on any way out before).
    public static func pair(purpose: String) throws(SystemCallError) -> (Wakeup, OwnedDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard stagebox_wakeup_pair(&fds) == 0 else { throw .last("making the wakeup socketpair for", purpose) }
        return (Wakeup(adopting: FileDescriptor(rawValue: fds[0])), OwnedDescriptor(FileDescriptor(rawValue: fds[1])))
    }

    /// Adopts one end of a peer's socketpair: this closes it from now on.
    public init(adopting fd: FileDescriptor) {
        descriptor = fd.rawValue
        sharedWithAPeer = true
    }

    deinit { close(descriptor) }

    /// Wakes the other side. One system call; never blocks (an eventfd's counter only grows; a
    /// full socket drops the wakeup: the other side has plenty pending already).
    @inline(__always)
    public func signal() {
        if sharedWithAPeer {
            _ = stagebox_wakeup_send(descriptor)
        } else {
            var one: UInt64 = 1
            _ = write(descriptor, &one, 8)
        }
    }

    /// Takes pending wakeups (a socket's at most 64 at a time: a flood cannot hold the caller).
    /// One system call when fewer than 16 wait, as one does after a wait: a socket's are taken
    /// 16 to a call.
    public func drain() {
        if sharedWithAPeer {
            for _ in 0..<4 { if stagebox_wakeup_take_many(descriptor) < 16 { break } }
        } else {
            var n: UInt64 = 0
            _ = read(descriptor, &n, 8)
        }
    }

    /// Waits until signalled or `timeoutNanos` passes (negative: forever). True if signalled.
    public func wait(timeoutNanos: Int64) -> Bool {
        var fd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let rc = stagebox_poll_ns(&fd, 1, timeoutNanos)
        if rc > 0 { drain(); return true }
        return false
    }
}
