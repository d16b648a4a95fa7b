import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A counting semaphore (POSIX) for threads that should sleep until there is work: `post` never
/// blocks, the waits block the calling thread only. Not for the audio thread, which never waits
/// on anything but its PCM and its clients.
public final class CountingSemaphore: @unchecked Sendable {
    // @unchecked: sem_t is made for use from several threads through these calls.
    private let handle: UnsafeMutablePointer<sem_t>

    public init() {
        handle = .allocate(capacity: 1)
        sem_init(handle, 0, 0)
    }

    deinit {
        sem_destroy(handle)
        handle.deallocate()
    }

    public func post() { sem_post(handle) }

    public func wait() { _ = retryingOnInterrupt { sem_wait(handle) } }

    /// Waits for a post for up to `nanoseconds`; true when one came. The deadline is taken on
    /// the wall clock (all that sem_timedwait offers on glibc and musl alike): a clock step
    /// only makes this one wait shorter or longer.
    @discardableResult
    public func wait(nanoseconds: Int64) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = Int64(now.tv_nsec) + nanoseconds % 1_000_000_000
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + Int(nanoseconds / 1_000_000_000) + Int(total / 1_000_000_000)
        deadline.tv_nsec = Int(total % 1_000_000_000)
        return retryingOnInterrupt { sem_timedwait(handle, &deadline) } == 0
    }
}
