import Logging
import StageboxSystem
import Synchronization
import StageboxTriggers

/// Stagebox's MIDI: the sequencer client, its connections, and the mapping, on a thread of
/// its own that blocks in poll(2) on the sequencer and a wakeup. Keys and pedals fire
/// triggers there; a trigger's change (any thread) is queued and sent from there, so only
/// that thread touches the sequencer.
public final class MIDIService: Sendable {
    let sequencer: Sequencer
    let policy: MIDIConnectPolicy
    let triggers: TriggerBoard
    let logger: Logger
    let initialMapper: MIDIMapper
    let loop: ServiceLoop
    /// The MIDI thread's own state across its turns (the lock is never contended).
    let threadState: Mutex<ThreadState>
    /// Triggers whose state changed, to be shown.
    let pending = Mutex<[String]>([])
    let statusBox: Mutex<MIDIStatus>
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
        threadState = Mutex(ThreadState(mapper: initialMapper))
        do {
            loop = try ServiceLoop(named: "the MIDI thread")
        } catch {
            throw MIDIError("\(error)", code: -error.errno.rawValue)
        }
        var status = MIDIStatus(client: sequencer.client)
        status.inPort = Int(sequencer.inPort)
        status.outPort = Int(sequencer.outPort)
        statusBox = Mutex(status)
    }

    /// Connects the peers the policy names and starts the thread.
    public func start() throws(MIDIError) {
        let descriptors = sequencer.pollDescriptors()
        do {
            try loop.start { [self] turn in .init(deadline: self.turn(turn, polling: descriptors), descriptors: descriptors) }
        } catch {
            throw MIDIError("\(error)", code: -error.errno.rawValue)
        }
    }

    /// Stops the thread (the sequencer closes when the service goes).
    public func stop() { loop.stop() }

    /// A trigger changed or went away: its notes and controllers are sent its state.
    public func triggerChanged(_ name: String) {
        guard initialMapper.mappings.contains(where: { $0.names(name) }) else { return }
        pending.withLock { $0.append(name) }
        loop.wake()
    }

    public var status: MIDIStatus { statusBox.withLock { $0 } }

    func count(_ change: (inout MIDICounters) -> Void) { statusBox.withLock { change(&$0.counters) } }
}
