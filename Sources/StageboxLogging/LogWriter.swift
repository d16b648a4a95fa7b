import DequeModule
import StageboxSystem
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes log lines to a descriptor (stderr) from a thread of its own, so that no thread that
/// logs ever waits on a terminal: a pty nobody reads, a stuck serial line, a stalled syslog.
///
/// Lines go into a bounded queue. When the output does not drain and the queue is full, new
/// lines are dropped and counted; once the output takes lines again, the count is written first.
public final class LogWriter: Sendable {
    public let capacity: Int
    private let output: Int32
    private struct Queue {
        var lines = Deque<String>()
        var dropped = 0
        var stopping = false
    }
    private let queue: Mutex<Queue>
    /// Why the writer thread could not start, if it could not: then lines are only counted
    /// (and this was written to the output once, directly).
    public var startFailure: SystemCallError? { failure.withLock { $0 } }
    private let failure = Mutex<SystemCallError?>(nil)
    private let loop: ServiceLoop?
    private let finished = Atomic<Bool>(false)
    /// Lines dropped since the start, for reports.
    public let droppedTotal = Atomic<Int>(0)
    /// Where lines go instead of `output` while set: a console on the same terminal shows them
    /// above its prompt. Called on the writer thread, one line at a time.
    private let sink = Mutex<(@Sendable (String) -> Void)?>(nil)

    public init(output: Int32 = 2, capacity: Int = 1024) {
        self.output = output
        self.capacity = capacity
        queue = Mutex(Queue())
        var unmade: SystemCallError?
        do { loop = try ServiceLoop(named: "the log writer") } catch {
            loop = nil
            unmade = error
        }
        do throws(SystemCallError) {
            if let unmade { throw unmade }
            try loop?.start({ [self] _ in
                writeQueued()
                return .init()
            }, finish: { [self] in
                writeQueued()
                finished.store(true, ordering: .relaxed)
            })
        } catch {
            failure.withLock { $0 = error }
            finished.store(true, ordering: .relaxed)
            put("stagebox: \(error); log lines are only counted from now on\n")
        }
    }

    /// Queues a line (a newline is added); never waits. False when the line was dropped.
    @discardableResult
    public func write(_ line: String) -> Bool {
        let queued = queue.withLock { q -> Bool in
            guard q.lines.count < capacity, !q.stopping else {
                q.dropped += 1
                return false
            }
            q.lines.append(line)
            return true
        }
        if queued { loop?.wake() } else { droppedTotal.add(1, ordering: .relaxed) }
        return queued
    }

    /// Sends lines to `sink` from now on instead of the output (nil: to the output again).
    public func redirect(to sink: (@Sendable (String) -> Void)?) {
        self.sink.withLock { $0 = sink }
    }

    /// Lines waiting to be written.
    public var pending: Int { queue.withLock { $0.lines.count } }

    /// Waits up to `seconds` for the queue to be written out, then stops the writer; lines still
    /// queued then are left behind. For the end of the program.
    public func close(waitingUpTo seconds: Double = 1) {
        let deadline = monotonicNanoseconds() + Int64(seconds * 1e9)
        while pending > 0 && monotonicNanoseconds() < deadline && !finished.load(ordering: .relaxed) {
            usleep(2000)
        }
        queue.withLock { $0.stopping = true }
        // Not joined: the writer may be held up by its output for good.
        loop?.requestStop()
    }

    /// One turn of the writer thread: every queued line written, a drop count first.
    private func writeQueued() {
        while true {
            let (line, dropped) = queue.withLock { q -> (String?, Int) in
                let d = q.dropped
                q.dropped = 0
                return (q.lines.popFirst(), d)
            }
            if dropped > 0 {
                deliver("stagebox: \(dropped) log line\(dropped == 1 ? " was" : "s were") dropped: the log output did not drain")
            }
            guard let line else { return }
            deliver(line)
        }
    }

    private func deliver(_ line: String) {
        if let sink = sink.withLock({ $0 }) { sink(line) } else { put(line + "\n") }
    }

    /// Writes all of `text`, however long the descriptor makes us wait (this thread may wait).
    private func put(_ text: String) {
        let bytes = Array(text.utf8)
        let descriptor = FileDescriptor(rawValue: output)
        var offset = 0
        while offset < bytes.count {
            do {
                // swift-system retries the write when a signal interrupts it.
                let n = try bytes[offset...].withUnsafeBytes { try descriptor.write($0) }
                if n == 0 { return }
                offset += n
            } catch Errno.wouldBlock {
                var p = pollfd(fd: output, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 1000)
            } catch {
                return // the output is gone: nothing more to do for this line
            }
        }
    }
}
