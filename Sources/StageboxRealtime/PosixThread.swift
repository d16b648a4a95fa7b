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
    private let handle: pthread_t

    /// Runs `body` on a new thread, or returns the error code pthread_create gave.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Result<PosixThread, PosixThreadError> {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }
        #if canImport(Musl)
        var tid: pthread_t?
        let rc = pthread_create(&tid, nil, entry, box)
        guard rc == 0, let started = tid else {
            Unmanaged<Body>.fromOpaque(box).release()
            return .failure(PosixThreadError(code: rc))
        }
        return .success(PosixThread(handle: started))
        #else
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, entry, box)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return .failure(PosixThreadError(code: rc))
        }
        return .success(PosixThread(handle: tid))
        #endif
    }

    /// The closure, kept alive until the new thread has taken it.
    private final class Body: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
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
