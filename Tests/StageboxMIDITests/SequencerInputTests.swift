import CALSA
import Testing
@testable import StageboxMIDI

/// alsa-lib's events read as messages, announcements or ignored kinds, and messages written
/// as events (the thin part over ALSA that needs no sequencer).
@Suite struct SequencerInputTests {
    private func event(_ type: snd_seq_event_type, from client: UInt8 = 20, _ fill: (inout snd_seq_event_t) -> Void = { _ in })
        -> snd_seq_event_t {
        var e = snd_seq_event_t()
        e.type = snd_seq_event_type_t(type.rawValue)
        e.source.client = client
        fill(&e)
        return e
    }

    @Test func notesAndControllersAreMessagesWithChannelsFrom1() {
        let on = event(SND_SEQ_EVENT_NOTEON) { $0.data.note.channel = 9; $0.data.note.note = 36; $0.data.note.velocity = 127 }
        #expect(SequencerInput(on) == .message(.noteOn(channel: 10, note: 36, velocity: 127)))
        let off = event(SND_SEQ_EVENT_NOTEOFF) { $0.data.note.channel = 0; $0.data.note.note = 60; $0.data.note.velocity = 0 }
        #expect(SequencerInput(off) == .message(.noteOff(channel: 1, note: 60, velocity: 0)))
        let cc = event(SND_SEQ_EVENT_CONTROLLER) { $0.data.control.channel = 15; $0.data.control.param = 64; $0.data.control.value = 90 }
        #expect(SequencerInput(cc) == .message(.controlChange(channel: 16, controller: 64, value: 90)))
    }

    @Test func otherEventsAreIgnoredByKind() {
        #expect(SequencerInput(event(SND_SEQ_EVENT_SYSEX)) == .ignored(kind: "sysex"))
        #expect(SequencerInput(event(SND_SEQ_EVENT_PITCHBEND)) == .ignored(kind: "pitch bend"))
        #expect(SequencerInput(event(SND_SEQ_EVENT_CLOCK)) == .ignored(kind: "realtime"))
        #expect(SequencerInput(event(SND_SEQ_EVENT_PGMCHANGE)) == .ignored(kind: "program change"))
        #expect(SequencerInput(event(SND_SEQ_EVENT_ECHO)) == .ignored(kind: "event type \(SND_SEQ_EVENT_ECHO.rawValue)"))
    }

    @Test func valuesOutOfRangeAreIgnored() {
        let note = event(SND_SEQ_EVENT_NOTEON) { $0.data.note.note = 200; $0.data.note.velocity = 1 }
        #expect(SequencerInput(note) == .ignored(kind: "note out of range"))
        let cc = event(SND_SEQ_EVENT_CONTROLLER) { $0.data.control.param = 7; $0.data.control.value = 300 }
        #expect(SequencerInput(cc) == .ignored(kind: "controller out of range"))
        let channel = event(SND_SEQ_EVENT_CONTROLLER) { $0.data.control.channel = 16; $0.data.control.param = 7 }
        #expect(SequencerInput(channel) == .ignored(kind: "controller out of range"))
    }

    @Test func theSystemClientAnnouncesPortsAndConnections() {
        let port = event(SND_SEQ_EVENT_PORT_START, from: 0) { $0.data.addr.client = 24; $0.data.addr.port = 0 }
        #expect(SequencerInput(port) == .portStarted(SequencerAddress(client: 24, port: 0)))
        let client = event(SND_SEQ_EVENT_CLIENT_START, from: 0) { $0.data.addr.client = 24 }
        #expect(SequencerInput(client) == .clientStarted(client: 24))
        let subscribed = event(SND_SEQ_EVENT_PORT_SUBSCRIBED, from: 0) {
            $0.data.connect.sender = snd_seq_addr_t(client: 128, port: 1)
            $0.data.connect.dest = snd_seq_addr_t(client: 24, port: 0)
        }
        #expect(SequencerInput(subscribed) == .subscription(sender: .init(client: 128, port: 1), destination: .init(client: 24, port: 0),
                                                            connected: true))
        #expect(SequencerInput(event(SND_SEQ_EVENT_PORT_EXIT, from: 0)) == .gone)
        #expect(SequencerInput(event(SND_SEQ_EVENT_CLIENT_CHANGE, from: 0)) == .otherAnnouncement)
    }

    @Test func aNoteFromAPeerIsNotAnAnnouncement() {
        // A port start's number sent by a client other than the system is no announcement.
        #expect(SequencerInput(event(SND_SEQ_EVENT_PORT_START, from: 20)) == .ignored(kind: "event type \(SND_SEQ_EVENT_PORT_START.rawValue)"))
    }

    @Test func messagesBecomeDirectEventsToTheSubscribers() {
        let on = MIDIMessage.noteOn(channel: 10, note: 36, velocity: 127).event(from: 1)
        #expect(UInt32(on.type) == SND_SEQ_EVENT_NOTEON.rawValue)
        #expect(on.data.note.channel == 9 && on.data.note.note == 36 && on.data.note.velocity == 127)
        #expect(on.source.port == 1 && on.dest.client == UInt8(SND_SEQ_ADDRESS_SUBSCRIBERS) && on.queue == UInt8(SND_SEQ_QUEUE_DIRECT))
        let off = MIDIMessage.noteOff(channel: 1, note: 0, velocity: 0).event(from: 1, to: SequencerAddress(client: 20, port: 3))
        #expect(off.dest.client == 20 && off.dest.port == 3, "to one destination")
        #expect(UInt32(off.type) == SND_SEQ_EVENT_NOTEOFF.rawValue && off.data.note.channel == 0)
        var cc = MIDIMessage.controlChange(channel: 16, controller: 64, value: 127).event(from: 1)
        #expect(UInt32(cc.type) == SND_SEQ_EVENT_CONTROLLER.rawValue)
        #expect(cc.data.control.channel == 15 && cc.data.control.param == 64 && cc.data.control.value == 127)
        cc.source.client = 128 // the kernel stamps the sender's client
        #expect(SequencerInput(cc) == .message(.controlChange(channel: 16, controller: 64, value: 127)), "read back as written")
    }
}
