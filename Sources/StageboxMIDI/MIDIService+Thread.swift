import CALSA
import Logging
import StageboxSystem
import Synchronization
import StageboxTriggers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The MIDI thread: the only one that touches the sequencer once started.
extension MIDIService {
    /// What the MIDI thread keeps from one turn to the next.
    struct ThreadState: Sendable {
        var mapper: MIDIMapper
        var connected = false
        var loggedIgnored = 0
        var ignoredLoggedAt: Int64 = .min / 2
    }

    /// One turn of the MIDI thread: events read and mapped, due long presses fired, changed
    /// triggers sent; returns when the next turn is due at the latest.
    func turn(_ turn: ServiceLoop.Turn, polling descriptors: [pollfd]) -> Int64? {
        threadState.withLock { s in
            if !s.connected {
                connectExisting()
                // Each connection made here comes back as an announcement, which sends that
                // destination the states (as for one made with aconnect).
                refreshPeers()
                s.connected = true
            }
            if let failed = turn.waitFailed {
                logger.error("midi: waiting for events (poll): \(SystemCallError("poll", errno: failed))")
            }
            if descriptors.contains(where: { turn.revents(of: $0.fd) != 0 }) { readEvents(&s.mapper) }
            fire(s.mapper.advance(to: monotonicNanoseconds()), s.mapper)
            sendPending(s.mapper)
            let after = statusBox.withLock { $0.counters }
            if after.ignored > s.loggedIgnored && monotonicNanoseconds() - s.ignoredLoggedAt >= Self.ignoredLogInterval {
                logger.warning("midi: \(after.ignored) events ignored so far (\(after.summary))")
                s.loggedIgnored = after.ignored
                s.ignoredLoggedAt = monotonicNanoseconds()
            }
            let logDue = after.ignored > s.loggedIgnored ? s.ignoredLoggedAt + Self.ignoredLogInterval : nil
            return [s.mapper.nextDeadline, logDue].compactMap { $0 }.min()
        }
    }

    private func readEvents(_ mapper: inout MIDIMapper) {
        var peersChanged = false
        var newDestinations: [SequencerAddress] = []
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
                for port in sequencer.allPorts() where port.address.client == client { connect(port) }
            case .portStarted(let address):
                if let port = sequencer.port(address) { connect(port) }
            case .subscription(let sender, let destination, let connected):
                guard sender == sequencer.outAddress || destination == sequencer.inAddress else { return }
                peersChanged = true
                if connected && sender == sequencer.outAddress { newDestinations.append(destination) }
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
        if peersChanged { refreshPeers() }
        for destination in newDestinations { sendAll(mapper, to: destination) }
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

    /// Connects `port` when the policy says so: as a source, and as a destination only when it
    /// is a source too (a controller's port, whose LEDs follow): a port that only receives is a
    /// synth or an interface's output, which would play the state notes as sound.
    private func connect(_ port: SequencerPort) {
        guard policy.connects(client: port.address.client, name: port.clientName, own: sequencer.client) else { return }
        // A client's start and its port's are both announced: a port connected already is left.
        let sources = sequencer.subscribers(of: sequencer.inPort, readers: false)
        let destinations = sequencer.subscribers(of: sequencer.outPort, readers: true)
        do throws(MIDIError) {
            if port.isSource && !sources.contains(port.address) {
                try sequencer.connect(from: port.address)
                logger.info("midi: connected \(port.description) → Stagebox")
            }
            if port.isDestination && port.isSource && !destinations.contains(port.address) {
                try sequencer.connect(to: port.address)
                logger.info("midi: connected Stagebox → \(port.description)")
            }
        } catch {
            logger.error("midi: \(error)")
        }
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

    private func sendPending(_ mapper: MIDIMapper) {
        let names = pending.withLock { p in defer { p = [] }; return p }
        // Nobody listening: nothing to send (and nothing to count as sent).
        guard statusBox.withLock({ !$0.destinations.isEmpty }) else { return }
        for name in names { send(mapper.feedback(trigger: name, state: triggers.state(name))) }
    }

    /// Every mapped trigger's state, to a destination that was just connected.
    private func sendAll(_ mapper: MIDIMapper, to destination: SequencerAddress) {
        for name in mapper.triggers { send(mapper.feedback(trigger: name, state: triggers.state(name)), to: destination) }
    }

    /// To `destination`, or to everything connected to "MIDI out" (nil).
    private func send(_ messages: [MIDIMessage], to destination: SequencerAddress? = nil) {
        for message in messages {
            let rc = sequencer.send(message, to: destination)
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
