import CLinux
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Wakes the button or LED thread out of its poll(2): an eventfd that other threads signal
/// (a trigger's change, a stop); the MIDI thread's too.
public final class ThreadWakeup: Sendable {
    public let descriptor: Int32

    /// `purpose` names it in the error: "making the eventfd for the LED thread: …".
    public init(purpose: String) throws(SystemCallError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .last("making the eventfd for", purpose) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Never blocks: the counter only grows.
    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    /// Takes every pending wakeup.
    public func drain() {
        var n: UInt64 = 0
        _ = read(descriptor, &n, 8)
    }
}
