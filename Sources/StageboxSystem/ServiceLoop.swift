import CLinux
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A service thread: the one loop every thread of the control side runs (the bus server, the
/// buttons, the LEDs, MIDI, the console, the writers). Each turn does the thread's work, then
/// the thread sleeps in one `poll` on its descriptors and its `Wakeup` until one is ready, it is
/// woken, or the deadline the turn asked for comes. `stop` wakes it and joins it.
///
/// Never used on the audio thread, which waits only on its PCM.
public final class ServiceLoop: Sendable {
    /// What woke a turn: the descriptors polled with their `revents` (empty after a timeout or
    /// a wakeup alone, and before the first wait), and whether the wakeup was signalled.
    public struct Turn: Sendable {
        public var polled: [pollfd]
        public var woken: Bool
        /// The wait itself failed (not for a signal): the loop waited a tenth of a second
        /// before this turn rather than spin.
        public var waitFailed: Errno?

        /// What `poll` said of `descriptor` (0: not ready, or not polled).
        public func revents(of descriptor: Int32) -> Int16 {
            polled.first { $0.fd == descriptor }?.revents ?? 0
        }
    }

    /// What the turn asks for next: when to run again at the latest (monotonic nanoseconds; nil:
    /// only when a descriptor is ready or the loop is woken), and which descriptors to wait on.
    public struct Next: Sendable {
        public var deadline: Int64?
        public var descriptors: [pollfd]

        public init(deadline: Int64? = nil, descriptors: [pollfd] = []) {
            self.deadline = deadline
            self.descriptors = descriptors
        }

        /// Waits on `descriptors` for input only.
        public static func reading(_ descriptors: [Int32], deadline: Int64? = nil) -> Next {
            Next(deadline: deadline, descriptors: descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) })
        }
    }

    public let name: String
    private let stackSize: Int?
    private let wakeup: Wakeup
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<PosixThread?>(nil)

    /// `name` names the thread ("the LEDs" runs as `LEDs`) and its errors. `stackSize` nil: the
    /// system's default, for a loop that calls a client program's handlers.
    public init(named name: String, stackSize: Int? = PosixThread.serviceStackSize) throws(SystemCallError) {
        self.name = name
        self.stackSize = stackSize
        wakeup = try Wakeup(purpose: name)
    }

    /// Starts the thread. `turn` runs first at once, then after every wait; `finish` runs on
    /// the thread once the loop has ended (to release what the turns used).
    public func start(_ turn: @escaping @Sendable (Turn) -> Next,
                      finish: @escaping @Sendable () -> Void = {}) throws(SystemCallError) {
        let started = PosixThread.start(named: name, stackSize: stackSize) { [self] in
            run(turn)
            finish()
        }
        switch started {
        case .success(let t): thread.withLock { $0 = t }
        case .failure(let error): throw error
        }
    }

    /// Makes the thread run a turn soon. Any thread; one system call; never blocks.
    @inline(__always)
    public func wake() { wakeup.signal() }

    /// True once `stop` was called: a long turn may end early.
    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Asks the loop to end after its current turn, without waiting for it: for a thread that
    /// may be held up by its output (the log writer on a terminal nobody reads).
    public func requestStop() {
        stopping.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// Stops the loop after its current turn and waits for the thread to end (from the thread
    /// itself, detaches instead). Safe to call more than once, and before `start`.
    public func stop() {
        requestStop()
        let started = thread.withLock { t in
            let taken = t
            t = nil
            return taken
        }
        started?.joinOrDetach()
    }

    private func run(_ turn: @Sendable (Turn) -> Next) {
        var current = Turn(polled: [], woken: false, waitFailed: nil)
        while !stopping.load(ordering: .acquiring) {
            let next = turn(current)
            if stopping.load(ordering: .acquiring) { break }
            var fds = next.descriptors
            fds.append(pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0))
            let timeout = next.deadline.map { max(0, $0 - monotonicNanoseconds()) } ?? -1
            let rc = fds.withUnsafeMutableBufferPointer { stagebox_poll_ns($0.baseAddress!, UInt($0.count), timeout) }
            let failed = rc < 0 && errno != EINTR ? Errno.last : nil
            if failed != nil { usleep(100_000) }
            let woken = rc > 0 && fds[fds.count - 1].revents != 0
            if woken { wakeup.drain() }
            fds.removeLast()
            current = Turn(polled: rc > 0 ? fds : [], woken: woken, waitFailed: failed)
        }
    }
}
