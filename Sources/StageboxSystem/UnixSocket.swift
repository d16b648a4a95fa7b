import CLinux
import SystemPackage

/// New close-on-exec Unix sockets (swift-system has no sockets; the flags come from CLinux,
/// which spells them the same for glibc and musl).
public enum UnixSocket {
    /// A stream socket (the bus), non-blocking when asked.
    public static func stream(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        let fd = stagebox_unix_stream_socket(nonBlocking ? 1 : 0)
        guard fd >= 0 else { throw Errno.last }
        return FileDescriptor(rawValue: fd)
    }

    /// A datagram socket (systemd's notification socket).
    public static func datagram() throws(Errno) -> FileDescriptor {
        let fd = stagebox_unix_datagram_socket()
        guard fd >= 0 else { throw Errno.last }
        return FileDescriptor(rawValue: fd)
    }
}
