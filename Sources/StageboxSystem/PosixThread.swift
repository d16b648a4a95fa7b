import CLinux
import SystemPackage

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
    // @unchecked: pthread_t is a plain id (or, in musl, an opaque pointer) meant to be joined
    // from another thread.
    private let handle: pthread_t

    /// The stack of the appliance's own threads (the audio thread, the service loops, the
    /// updater's job). The appliance locks its memory; locked whole, as it once was, glibc's
    /// default stack (8 MiB, from RLIMIT_STACK) made five threads cost 40 MiB of a 512 MB Pi
    /// Zero 2 W. Now only what a stack touches is locked, and the size bounds the worst case. These threads run the project's own code and the C libraries it
    /// calls (alsa-lib, libsndfile, libFLAC) with no recursion and no large local arrays: the
    /// release build touched 16–24 KiB of each; 512 KiB leaves room for a debug build's larger
    /// frames (see tools/benchmark/memory.py). Threads that run a client program's callbacks
    /// keep the system's default: their depth is the program's.
    public static let serviceStackSize = 512 * 1024

    /// Runs `body` on a new thread. A thread that cannot start is an error for the caller to
    /// report, named after `name` ("starting the thread for the bus server: Resource
    /// temporarily unavailable"). `stackSize` nil: the system's default.
    public static func start(named name: String = "a task", stackSize: Int? = nil,
                             _ body: @escaping @Sendable () -> Void) -> Result<PosixThread, SystemCallError> {
        func failure(_ code: Int32) -> Result<PosixThread, SystemCallError> {
            .failure(SystemCallError("starting the thread for", name, errno: Errno(rawValue: code)))
        }
        var attributes = pthread_attr_t()
        guard pthread_attr_init(&attributes) == 0 else { return failure(ENOMEM) }
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize {
            let rc = pthread_attr_setstacksize(&attributes, stackSize)
            guard rc == 0 else { return failure(rc) }
        }
        // The thread names itself (its kernel name, as `ps -L`, top and /proc show it): "the bus
        // server" becomes "bus server", cut to the kernel's 15 bytes.
        let kernelName = String(decoding: (name.hasPrefix("the ") ? name.dropFirst(4) : Substring(name)).utf8.prefix(15),
                                as: UTF8.self)
        let box = Unmanaged.passRetained(Body {
            _ = stagebox_name_thread(kernelName)
            body()
        }).toOpaque()
        let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }
        #if canImport(Musl)
        var tid: pthread_t?
        let rc = pthread_create(&tid, &attributes, entry, box)
        guard rc == 0, let started = tid else {
            Unmanaged<Body>.fromOpaque(box).release()
            return failure(rc != 0 ? rc : EAGAIN)
        }
        return .success(PosixThread(handle: started))
        #else
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attributes, entry, box)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return failure(rc)
        }
        return .success(PosixThread(handle: tid))
        #endif
    }

    /// The closure, kept alive until the new thread has taken it.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Waits for the thread to end.
    public func join() { pthread_join(handle, nil) }

    /// Lets the thread run on its own: nobody waits for it, and it releases itself when it ends.
    public func detach() { pthread_detach(handle) }

    /// Joins, or detaches when called on the thread itself (which cannot join itself).
    public func joinOrDetach() {
        if pthread_equal(handle, pthread_self()) != 0 { pthread_detach(handle) } else { join() }
    }
}
