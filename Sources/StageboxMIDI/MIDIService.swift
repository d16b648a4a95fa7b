import CALSA
import CLinux
import Logging
import StageboxControls
import StageboxRealtime
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Stagebox's MIDI: the sequencer client, its connections, and the mapping, on a thread of
/// its own that blocks in poll(2) on the sequencer and a wakeup. Keys and pedals fire
/// triggers there; a trigger's change (any thread) is queued and sent from there, so only
/// that thread touches the sequencer.
public final class MIDIService: Sendable {
    private let sequencer: Sequencer
    private let policy: MIDIConnectPolicy
    private let triggers: TriggerBoard
    private let logger: Logger
    private let initialMapper: MIDIMapper
    private let wakeup: ThreadWakeup
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<PosixThread?>(nil)
    /// Triggers whose state changed, to be shown.
    private let pending = Mutex<[String]>([])
    private let statusBox: Mutex<MIDIStatus>
    /// Ignored events are logged at most this often (a sysex flood must not flood the log).
    static let ignoredLogInterval: Int64 = 10_000_000_000

    /// Opens the sequencer as client "Stagebox". Throws when there is none (no /dev/snd/seq, as
    /// in containers): the caller runs on without MIDI.
    public init(mappings: [MIDIMapping], connect: MIDIConnectPolicy, triggers: TriggerBoard, logger: Logger) throws(MIDIError) {
        sequencer = try Sequencer(name: "Stagebox")
        policy = connect
        self.triggers = triggers
        self.logger = logger
        initialMapper = MIDIMapper(mappings)
        do {
            wakeup = try ThreadWakeup(purpose: "the MIDI thread")
        } catch {
            throw MIDIError("making the MIDI thread's eventfd (\(error))", code: -error.errno.rawValue)
        }
        var status = MIDIStatus(client: sequencer.client)
        status.inPort = Int(sequencer.inPort)
        status.outPort = Int(sequencer.outPort)
        statusBox = Mutex(status)
    }

    /// Connects the peers the policy names and starts the thread.
    public func start() throws(MIDIError) {
        let started = PosixThread.start(named: "the MIDI thread") { [self] in run() }
        switch started {
        case .success(let t): thread.withLock { $0 = t }
        case .failure(let error): throw MIDIError("\(error)", code: -error.errno.rawValue)
        }
    }

    /// Stops the thread (the sequencer closes when the service goes).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wakeup.signal()
        thread.withLock { $0 }?.joinOrDetach()
        thread.withLock { $0 = nil }
    }

    /// A trigger changed or went away: its notes and controllers are sent its state.
    public func triggerChanged(_ name: String) {
        guard initialMapper.mappings.contains(where: { $0.names(name) }) else { return }
        pending.withLock { $0.append(name) }
        wakeup.signal()
    }

    public var status: MIDIStatus { statusBox.withLock { $0 } }

    private func count(_ change: (inout MIDICounters) -> Void) { statusBox.withLock { change(&$0.counters) } }

    // MARK: the MIDI thread

    private func run() {
        var mapper = initialMapper
        var loggedIgnored = 0
        var ignoredLoggedAt: Int64 = .min / 2
        connectExisting()
        refreshPeers()
        sendAll(&mapper)
        let seqFDs = sequencer.pollDescriptors()
        while !stopping.load(ordering: .acquiring) {
            let now = monotonicNanoseconds()
            let ignored = statusBox.withLock { $0.counters.ignored }
            let logDue = ignored > loggedIgnored ? ignoredLoggedAt + Self.ignoredLogInterval : nil
            let next = [mapper.nextDeadline, logDue].compactMap { $0 }.min()
            var fds = [pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)] + seqFDs
            let rc = stagebox_poll_ns(&fds, UInt(fds.count), next.map { max(0, $0 - now) } ?? -1)
            if rc < 0 && errno != EINTR {
                logger.error("midi: waiting for events (poll): \(SystemCallError.last("poll"))")
                usleep(100_000)
                continue
            }
            if fds[0].revents != 0 { wakeup.drain() }
            if fds.dropFirst().contains(where: { $0.revents != 0 }) { readEvents(&mapper) }
            fire(mapper.advance(to: monotonicNanoseconds()), mapper)
            sendPending(&mapper)
            let after = statusBox.withLock { $0.counters }
            if after.ignored > loggedIgnored && monotonicNanoseconds() - ignoredLoggedAt >= Self.ignoredLogInterval {
                logger.warning("midi: \(after.ignored) events ignored so far (\(after.summary))")
                loggedIgnored = after.ignored
                ignoredLoggedAt = monotonicNanoseconds()
            }
        }
    }

    private func readEvents(_ mapper: inout MIDIMapper) {
        var peersChanged = false
        var newDestination = false
        let errors = sequencer.readAll { event in
            let input = SequencerInput(event)
            let now = monotonicNanoseconds()
            switch input {
            case .message(let message):
                guard let fired = mapper.receive(message, at: now) else {
                    count { $0.received += 1; $0.unmapped += 1 }
                    return
                }
                count { $0.received += 1; $0.mapped += 1 }
                fire(fired, mapper, message: message)
            case .ignored(let kind):
                count { $0.received += 1; $0.ignoredByKind[kind, default: 0] += 1 }
            case .clientStarted(let client):
                for port in sequencer.allPorts() where port.address.client == client { newDestination = connect(port) || newDestination }
            case .portStarted(let address):
                if let port = sequencer.port(address) { newDestination = connect(port) || newDestination }
            case .subscription(let sender, let destination, let connected):
                guard sender == sequencer.outAddress || destination == sequencer.inAddress else { return }
                peersChanged = true
                if connected && sender == sequencer.outAddress { newDestination = true }
            case .gone:
                peersChanged = true
            case .otherAnnouncement:
                return
            }
        }
        for error in errors {
            if error == -ENOSPC {
                count { $0.overruns += 1 }
            } else {
                logger.error("midi: \(MIDIError("reading events", code: error))")
            }
        }
        if peersChanged || newDestination { refreshPeers() }
        if newDestination { sendAll(&mapper) }
    }

    private func fire(_ fired: [MIDIMapper.Fired], _ mapper: MIDIMapper, message: MIDIMessage? = nil) {
        for f in fired {
            guard let name = f.trigger else { continue }
            let m = mapper.mappings[f.mapping]
            let channel = message.map { "\($0.channel)" } ?? m.channel.map { "\($0)" } ?? "any"
            let what = "midi \(m.control) channel \(channel): \(Self.eventName(f.event)) → \(name)"
            if let state = triggers.fire(name) {
                logger.info("\(what) (\(state.name))")
            } else {
                logger.info("\(what): no such trigger (yet); nothing fired")
            }
        }
    }

    /// Connects both ways to `port` when the policy says so; true when it became a destination.
    @discardableResult
    private func connect(_ port: SequencerPort) -> Bool {
        guard policy.connects(client: port.address.client, name: port.clientName, own: sequencer.client) else { return false }
        var destination = false
        do throws(MIDIError) {
            if port.isSource {
                try sequencer.connect(from: port.address)
                logger.info("midi: connected \(port.description) → Stagebox")
            }
            if port.isDestination {
                try sequencer.connect(to: port.address)
                logger.info("midi: connected Stagebox → \(port.description)")
                destination = true
            }
        } catch {
            logger.error("midi: \(error)")
        }
        return destination
    }

    private func connectExisting() {
        for port in sequencer.allPorts() { connect(port) }
    }

    /// Reads who is connected to our ports now (a connection made with aconnect, a peer that left).
    private func refreshPeers() {
        func peers(_ addresses: [SequencerAddress]) -> [SequencerPort] {
            addresses.filter { $0.client != MIDIConnectPolicy.systemClient }.sorted().compactMap { sequencer.port($0) }
        }
        let sources = peers(sequencer.subscribers(of: sequencer.inPort, readers: false))
        let destinations = peers(sequencer.subscribers(of: sequencer.outPort, readers: true))
        statusBox.withLock {
            $0.sources = sources
            $0.destinations = destinations
        }
    }

    private func sendPending(_ mapper: inout MIDIMapper) {
        let names = pending.withLock { p in defer { p = [] }; return p }
        for name in names { send(mapper.feedback(trigger: name, state: triggers.state(name))) }
    }

    /// Every mapped trigger's state: what a destination that just came shows.
    private func sendAll(_ mapper: inout MIDIMapper) {
        for name in mapper.triggers { send(mapper.feedback(trigger: name, state: triggers.state(name))) }
    }

    private func send(_ messages: [MIDIMessage]) {
        for message in messages {
            let rc = sequencer.send(message)
            if rc == 0 {
                count { $0.sent += 1 }
            } else {
                count { $0.sendFailures += 1 }
                logger.error("midi: \(MIDIError("sending \(message)", code: rc))")
            }
        }
    }

    private static func eventName(_ event: ButtonEvent) -> String {
        switch event {
        case .press: "press"
        case .release: "release"
        case .longPress: "long press"
        }
    }
}
