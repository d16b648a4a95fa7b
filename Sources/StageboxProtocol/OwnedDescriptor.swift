#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A descriptor on its way to the other side of the socket: closed when it goes out of scope,
/// so that no error path between making it and sending it can leak it.
public final class OwnedDescriptor: @unchecked Sendable {
    // @unchecked: immutable; closed once, by deinit.
    public let raw: Int32

    public init(_ raw: Int32) { self.raw = raw }

    deinit { close(raw) }
}
