import CALSA

/// What one sequencer event means to Stagebox: a channel message to map, news from the
/// System client's announce port, or something ignored (and counted).
public enum SequencerInput: Sendable, Equatable {
    case message(MIDIMessage)
    /// A client or a port appeared: a candidate to connect.
    case clientStarted(client: Int)
    case portStarted(SequencerAddress)
    /// A connection was made or broken (anyone's: `aconnect`, a client leaving).
    case subscription(sender: SequencerAddress, destination: SequencerAddress, connected: Bool)
    /// A port or a client went away.
    case gone
    /// Any other announcement (a queue's, a client's change of name).
    case otherAnnouncement
    /// Not a message Stagebox maps: sysex, program change, clock, a note out of range…;
    /// `kind` names it for the counters.
    case ignored(kind: String)

    /// Reads an event as alsa-lib hands it over.
    public init(_ event: snd_seq_event_t) {
        let type = UInt32(event.type)
        if Int32(event.source.client) == SND_SEQ_CLIENT_SYSTEM {
            self = Self.announcement(type, event)
            return
        }
        let channel = Int(event.data.note.channel) + 1
        switch type {
        case SND_SEQ_EVENT_NOTEON.rawValue, SND_SEQ_EVENT_NOTEOFF.rawValue:
            let note = event.data.note
            guard note.channel < 16, note.note < 128, note.velocity < 128 else {
                self = .ignored(kind: "note out of range")
                return
            }
            self = type == SND_SEQ_EVENT_NOTEON.rawValue
                ? .message(.noteOn(channel: channel, note: Int(note.note), velocity: Int(note.velocity)))
                : .message(.noteOff(channel: channel, note: Int(note.note), velocity: Int(note.velocity)))
        case SND_SEQ_EVENT_CONTROLLER.rawValue:
            let control = event.data.control
            guard control.channel < 16, control.param < 128, (0..<128).contains(control.value) else {
                self = .ignored(kind: "controller out of range")
                return
            }
            self = .message(.controlChange(channel: Int(control.channel) + 1, controller: Int(control.param),
                                           value: Int(control.value)))
        default:
            self = .ignored(kind: Self.kindName(type))
        }
    }

    private static func announcement(_ type: UInt32, _ event: snd_seq_event_t) -> SequencerInput {
        func address(_ a: snd_seq_addr_t) -> SequencerAddress { SequencerAddress(client: Int(a.client), port: Int(a.port)) }
        switch type {
        case SND_SEQ_EVENT_CLIENT_START.rawValue: return .clientStarted(client: Int(event.data.addr.client))
        case SND_SEQ_EVENT_PORT_START.rawValue: return .portStarted(address(event.data.addr))
        case SND_SEQ_EVENT_PORT_SUBSCRIBED.rawValue, SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue:
            return .subscription(sender: address(event.data.connect.sender), destination: address(event.data.connect.dest),
                                 connected: type == SND_SEQ_EVENT_PORT_SUBSCRIBED.rawValue)
        case SND_SEQ_EVENT_CLIENT_EXIT.rawValue, SND_SEQ_EVENT_PORT_EXIT.rawValue: return .gone
        default: return .otherAnnouncement
        }
    }

    /// A name for an event type Stagebox does not map, for the counters.
    static func kindName(_ type: UInt32) -> String {
        switch type {
        case SND_SEQ_EVENT_SYSEX.rawValue: "sysex"
        case SND_SEQ_EVENT_PGMCHANGE.rawValue: "program change"
        case SND_SEQ_EVENT_PITCHBEND.rawValue: "pitch bend"
        case SND_SEQ_EVENT_KEYPRESS.rawValue, SND_SEQ_EVENT_CHANPRESS.rawValue: "aftertouch"
        case SND_SEQ_EVENT_CLOCK.rawValue, SND_SEQ_EVENT_START.rawValue, SND_SEQ_EVENT_CONTINUE.rawValue,
             SND_SEQ_EVENT_STOP.rawValue, SND_SEQ_EVENT_SENSING.rawValue, SND_SEQ_EVENT_TICK.rawValue: "realtime"
        case SND_SEQ_EVENT_QFRAME.rawValue, SND_SEQ_EVENT_SONGPOS.rawValue, SND_SEQ_EVENT_SONGSEL.rawValue,
             SND_SEQ_EVENT_TUNE_REQUEST.rawValue: "system common"
        default: "event type \(type)"
        }
    }
}

extension MIDIMessage {
    /// The message as a direct event from `port` to `destination`, or to all the port's
    /// subscribers (nil).
    func event(from port: Int32, to destination: SequencerAddress? = nil) -> snd_seq_event_t {
        var event = snd_seq_event_t()
        event.queue = UInt8(SND_SEQ_QUEUE_DIRECT)
        event.source.port = UInt8(truncatingIfNeeded: port)
        event.dest.client = destination.map { UInt8(truncatingIfNeeded: $0.client) } ?? UInt8(SND_SEQ_ADDRESS_SUBSCRIBERS)
        event.dest.port = destination.map { UInt8(truncatingIfNeeded: $0.port) } ?? UInt8(SND_SEQ_ADDRESS_UNKNOWN)
        switch self {
        case let .noteOn(channel, note, velocity), let .noteOff(channel, note, velocity):
            let on = if case .noteOn = self { true } else { false }
            event.type = snd_seq_event_type_t((on ? SND_SEQ_EVENT_NOTEON : SND_SEQ_EVENT_NOTEOFF).rawValue)
            event.data.note.channel = UInt8(clamping: channel - 1)
            event.data.note.note = UInt8(clamping: note)
            event.data.note.velocity = UInt8(clamping: velocity)
        case let .controlChange(channel, controller, value):
            event.type = snd_seq_event_type_t(SND_SEQ_EVENT_CONTROLLER.rawValue)
            event.data.control.channel = UInt8(clamping: channel - 1)
            event.data.control.param = UInt32(clamping: controller)
            event.data.control.value = Int32(clamping: value)
        }
        return event
    }
}
