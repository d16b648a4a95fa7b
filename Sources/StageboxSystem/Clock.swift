import CLinux

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The monotonic clock in nanoseconds. `clock_gettime` is served by the vDSO on Linux:
/// no system call, safe on the audio thread.
@inline(__always)
public func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// Converts a `timespec` to nanoseconds.
@inline(__always)
public func nanoseconds(_ ts: timespec) -> Int64 {
    Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// Sleeps until the monotonic clock reaches `deadline` (nanoseconds). This is the one wait of
/// the timer-paced loops (the simulated board, and devices that do not pace themselves),
/// the counterpart of poll() on a sound card: an absolute deadline, so no drift accumulates.
/// The bare system call (`stagebox_sleep_until`): not glibc's wrapper, a cancellation point.
@inline(__always)
public func sleepUntil(monotonicNanos deadline: Int64) {
    // The error comes back as the result, not through errno, and this runs on the audio
    // thread: the loop stays here, bare, rather than in a shared helper.
    while stagebox_sleep_until(deadline) == EINTR {}
}

/// Waits for events on `count` descriptors from `fds`, up to `timeoutMs` (negative: no limit):
/// the ALSA loop's wait for the period interrupt. The bare system call (`stagebox_poll`), not
/// glibc's wrapper, a cancellation point, like `sleepUntil`. Returns what poll returns (-1 with
/// errno set on an error; EINTR is the caller's to retry).
@inline(__always)
public func pollDescriptors(_ fds: UnsafeMutablePointer<pollfd>, count: Int, timeoutMs: Int32) -> Int32 {
    stagebox_poll(fds, UInt(count), timeoutMs)
}
