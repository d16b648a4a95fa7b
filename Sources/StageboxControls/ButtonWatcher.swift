import StageboxSystem
import Synchronization
import StageboxTriggers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches every button on one thread: poll(2) over each line's event descriptor, the kernel's
/// time stamps into each button's `ButtonMachine`, and a timeout for the next debounce or long
/// press. Never on the audio thread; `onEvent` runs on the button thread.
public final class ButtonWatcher: Sendable {
    /// A button as the console shows it.
    public struct Status: Sendable, Equatable {
        public var settings: ButtonSettings
        /// The debounced level; nil when the line could not be had.
        public var pressed: Bool?
        /// Why the line is not watched, if it is not.
        public var problem: String?
    }

    private struct Watched: Sendable {
        var index: Int
        let line: GPIOLine
        let descriptor: Int32
        var machine: ButtonMachine
    }

    private let buttons: [ButtonSettings]
    private let consumer: String
    private let onEvent: @Sendable (ButtonSettings, ButtonEvent) -> Void
    private let onProblem: @Sendable (GPIOError) -> Void
    private let status: Mutex<[Status]>
    /// The lines being watched: the button thread's own (the lock is never contended).
    private let watching = Mutex<[Watched]>([])
    private let loop: ServiceLoop

    /// `onEvent` hears every debounced event of every button; `onProblem` a line that fails
    /// while watched (it is then dropped; the others go on).
    public init(buttons: [ButtonSettings], consumer: String = "stagebox",
                onEvent: @escaping @Sendable (ButtonSettings, ButtonEvent) -> Void,
                onProblem: @escaping @Sendable (GPIOError) -> Void) throws(SystemCallError) {
        self.buttons = buttons
        self.consumer = consumer
        self.onEvent = onEvent
        self.onProblem = onProblem
        status = Mutex(buttons.map { Status(settings: $0, pressed: nil, problem: "not started") })
        loop = try ServiceLoop(named: "the buttons")
    }

    /// Requests every line and starts the thread. Returns the lines that could not be had (each
    /// error names its chip and line); the other buttons work.
    public func start() throws(SystemCallError) -> [GPIOError] {
        var watched: [Watched] = []
        var errors: [GPIOError] = []
        for (index, button) in buttons.enumerated() {
            do throws(GPIOError) {
                let line = try GPIOLine(chip: button.chip, offset: button.line)
                try line.watchEdges(consumer: consumer, activeLow: button.activeLow, bias: button.bias)
                let pressed = try line.value()
                watched.append(Watched(index: index, line: line, descriptor: try line.eventDescriptor(),
                                       machine: button.machine(pressed: pressed, now: monotonicNanoseconds())))
                setStatus(index, pressed: pressed, problem: nil)
            } catch {
                errors.append(error)
                setStatus(index, pressed: nil, problem: error.description)
            }
        }
        guard !watched.isEmpty else { return errors }
        watching.withLock { $0 = watched }
        try loop.start({ [self] turn in
            watching.withLock { watched in
                take(turn, &watched)
                return .reading(watched.map(\.descriptor), deadline: watched.compactMap(\.machine.nextDeadline).min())
            }
        }, finish: { [self] in
            watching.withLock { watched in
                for w in watched { w.line.release() }
                watched = []
            }
        })
        return errors
    }

    /// Stops the thread and releases the lines.
    public func stop() { loop.stop() }

    /// Every button and its debounced level.
    public var statuses: [Status] { status.withLock { $0 } }

    private func setStatus(_ index: Int, pressed: Bool?, problem: String?) {
        status.withLock {
            $0[index].pressed = pressed
            $0[index].problem = problem
        }
    }

    /// One turn of the button thread: the edges of every line that has some go into its
    /// machine, a line that fails is dropped (the others go on), and every machine whose
    /// deadline has come runs.
    private func take(_ turn: ServiceLoop.Turn, _ watched: inout [Watched]) {
        if let failed = turn.waitFailed {
            // Not a line's fault: nothing to drop; the loop waited before this turn.
            errno = failed.rawValue
            onProblem(GPIOError(chip: "(all buttons)", line: -1, what: "poll"))
        }
        var broken: [Int] = []
        for i in watched.indices {
            let revents = turn.revents(of: watched[i].descriptor)
            guard revents != 0 else { continue }
            do throws(GPIOError) {
                // An error or hang-up with nothing to read: a read would block the thread.
                guard revents & Int16(POLLIN) != 0 else {
                    errno = EIO
                    throw GPIOError(chip: watched[i].line.chipName, line: watched[i].line.offset,
                                    what: "polling for edges (poll flags \(revents))")
                }
                let edges = try watched[i].line.readEdges()
                let readAt = monotonicNanoseconds()
                for edge in edges {
                    // A stamp from the future (another clock) counts as now.
                    let time = edge.timeNanos > 0 && edge.timeNanos <= readAt ? edge.timeNanos : readAt
                    deliver(watched[i].index, watched[i].machine.edge(pressed: edge.edge == .rising, at: time))
                }
            } catch {
                onProblem(error)
                setStatus(watched[i].index, pressed: nil, problem: error.description)
                broken.append(i)
            }
        }
        for i in broken.reversed() {
            watched[i].line.release()
            watched.remove(at: i)
        }
        advanceDue(&watched)
    }

    /// Runs every machine whose deadline has come. Before a settled level counts, the line is
    /// read once more: the kernel's edge type is the level when its handler ran, which a
    /// bounce can make stale; a line that reads otherwise starts its wait again.
    private func advanceDue(_ watched: inout [Watched]) {
        let now = monotonicNanoseconds()
        for i in watched.indices {
            guard let due = watched[i].machine.nextDeadline, due <= now else { continue }
            let machine = watched[i].machine
            if machine.rawLevel != machine.pressed, let level = try? watched[i].line.value(), level != machine.rawLevel {
                deliver(watched[i].index, watched[i].machine.edge(pressed: level, at: now))
            }
            deliver(watched[i].index, watched[i].machine.advance(to: now))
        }
        status.withLock { table in
            for w in watched { table[w.index].pressed = w.machine.pressed }
        }
    }

    private func deliver(_ index: Int, _ events: [ButtonEvent]) {
        for event in events { onEvent(buttons[index], event) }
    }
}
