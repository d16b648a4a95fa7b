import CLinux
import StageboxSystem
import SystemPackage

/// Bytes with descriptors attached (SCM_RIGHTS) over a connected Unix socket. What comes in is
/// owned at once, so that no way out of the receiver (a bad message, an unexpected answer, a
/// client that should not send descriptors at all) can leak a descriptor.
public enum DescriptorPassing {
    /// The most descriptors one message carries; more are closed on arrival.
    public static let maximumDescriptors = Int(STAGEBOX_MAX_FDS)

    /// Sends up to `bytes.count` bytes with `descriptors` attached (they stay the caller's);
    /// returns the bytes sent. Retried on EINTR; never raises SIGPIPE.
    public static func send(_ socket: FileDescriptor, _ bytes: UnsafeRawBufferPointer,
                            descriptors: [FileDescriptor] = []) throws(Errno) -> Int {
        let raw = descriptors.map(\.rawValue)
        let sent = raw.withUnsafeBufferPointer { fds in
            retryingOnInterrupt {
                stagebox_send_with_fds(socket.rawValue, bytes.baseAddress, bytes.count, fds.baseAddress, Int32(fds.count))
            }
        }
        guard sent >= 0 else { throw Errno.last }
        return sent
    }

    /// Receives up to `buffer.count` bytes and the descriptors that came with them (received
    /// close-on-exec). 0 bytes: the peer closed the connection. Retried on EINTR.
    public static func receive(_ socket: FileDescriptor,
                               into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> (count: Int, descriptors: [OwnedDescriptor]) {
        var fds = [Int32](repeating: -1, count: maximumDescriptors)
        var count: Int32 = 0
        let n = fds.withUnsafeMutableBufferPointer { f in
            retryingOnInterrupt {
                stagebox_recv_with_fds(socket.rawValue, buffer.baseAddress, buffer.count, f.baseAddress, Int32(f.count), &count)
            }
        }
        guard n >= 0 else { throw Errno.last }
        let owned = fds.prefix(Int(max(0, min(count, Int32(maximumDescriptors))))).map { OwnedDescriptor(FileDescriptor(rawValue: $0)) }
        return (n, owned)
    }
}
