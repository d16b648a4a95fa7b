import Synchronization
import SystemPackage

/// A descriptor that crosses the socket (a ring's memfd, a wakeup's other end, whatever a peer
/// attached to a message): closed when the last reference goes, unless someone took it first.
/// Every error path between making or receiving one and handing it on therefore closes it.
///
/// A class rather than a non-copyable struct so that a message's descriptors can be an array.
public final class OwnedDescriptor: Sendable {
    /// The raw descriptor, -1 once taken or closed. Atomic so that taking is safe from any thread.
    private let raw: Atomic<Int32>

    public init(_ descriptor: FileDescriptor) { raw = Atomic(descriptor.rawValue) }

    deinit { close() }

    /// The descriptor while this still owns it (to send it, or to look at it), nil once taken.
    public var descriptor: FileDescriptor? {
        let fd = raw.load(ordering: .relaxed)
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    /// Hands the descriptor to the caller, who closes it from now on; nil if already taken.
    public func take() -> FileDescriptor? {
        let fd = raw.exchange(-1, ordering: .relaxed)
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    /// Closes it now (nothing if already taken or closed).
    public func close() {
        // EINTR from close on Linux still closed the descriptor: never retry it.
        try? take()?.close()
    }
}
