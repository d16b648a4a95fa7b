#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A started, joinable POSIX thread.
///
/// `pthread_t` is an integer in glibc and a pointer in musl (the static aarch64 build), so
/// Swift sees two different types; this is the one place that knows.
public struct PosixThread: @unchecked Sendable {
    public typealias Body = @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    private let handle: pthread_t

    /// Runs `body(argument)` on a new thread, or returns the error code pthread_create gave.
    public static func start(_ body: Body, _ argument: UnsafeMutableRawPointer?) -> Result<PosixThread, PosixThreadError> {
        #if canImport(Musl)
        var tid: pthread_t?
        let rc = pthread_create(&tid, nil, body, argument)
        guard rc == 0, let started = tid else { return .failure(PosixThreadError(code: rc)) }
        return .success(PosixThread(handle: started))
        #else
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, body, argument)
        guard rc == 0 else { return .failure(PosixThreadError(code: rc)) }
        return .success(PosixThread(handle: tid))
        #endif
    }

    /// Waits for the thread to end.
    public func join() { pthread_join(handle, nil) }

    /// Joins, or detaches when called on the thread itself (which cannot join itself).
    public func joinOrDetach() {
        if pthread_equal(handle, pthread_self()) != 0 { pthread_detach(handle) } else { join() }
    }
}

public struct PosixThreadError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
}
