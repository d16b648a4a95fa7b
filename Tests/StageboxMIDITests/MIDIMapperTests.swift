import Testing
@testable import StageboxMIDI
import StageboxTriggers

/// Messages in, trigger events out; trigger states in, messages out.
@Suite struct MIDIMapperTests {
    let pad = MIDIMapping(control: .note(36), channel: 10, press: "mute")
    let pedal = MIDIMapping(control: .controller(64), channel: nil, press: "record", release: "marker")
    let hold = MIDIMapping(control: .note(40), channel: 1, press: "mute", longPress: "mute-out", longPressNanos: 600)

    @Test func aNoteOnIsAPressAndANoteOffARelease() {
        var m = MIDIMapper([pad])
        #expect(m.receive(.noteOn(channel: 10, note: 36, velocity: 100), at: 0) == [.init(mapping: 0, event: .press, trigger: "mute")])
        #expect(m.receive(.noteOff(channel: 10, note: 36, velocity: 64), at: 10) == [.init(mapping: 0, event: .release, trigger: nil)])
    }

    @Test func aNoteOnWithVelocityZeroIsARelease() {
        var m = MIDIMapper([pad])
        _ = m.receive(.noteOn(channel: 10, note: 36, velocity: 1), at: 0)
        #expect(m.receive(.noteOn(channel: 10, note: 36, velocity: 0), at: 5) == [.init(mapping: 0, event: .release, trigger: nil)])
    }

    @Test func aSecondNoteOnOfAHeldKeyFiresNothing() {
        var m = MIDIMapper([pad])
        _ = m.receive(.noteOn(channel: 10, note: 36, velocity: 100), at: 0)
        #expect(m.receive(.noteOn(channel: 10, note: 36, velocity: 90), at: 1) == [])
    }

    @Test func otherNotesAndChannelsAreUnmapped() {
        var m = MIDIMapper([pad])
        #expect(m.receive(.noteOn(channel: 9, note: 36, velocity: 100), at: 0) == nil)
        #expect(m.receive(.noteOn(channel: 10, note: 37, velocity: 100), at: 0) == nil)
        #expect(m.receive(.controlChange(channel: 10, controller: 36, value: 127), at: 0) == nil, "a controller is not a note")
    }

    @Test func aControllerPressesWhenItCrosses64UpwardAndReleasesBelow() {
        var m = MIDIMapper([pedal])
        #expect(m.receive(.controlChange(channel: 3, controller: 64, value: 10), at: 0) == [], "below 64 from the start: no change")
        #expect(m.receive(.controlChange(channel: 3, controller: 64, value: 64), at: 1) == [.init(mapping: 0, event: .press, trigger: "record")])
        #expect(m.receive(.controlChange(channel: 3, controller: 64, value: 127), at: 2) == [], "still above: nothing")
        #expect(m.receive(.controlChange(channel: 3, controller: 64, value: 63), at: 3) == [.init(mapping: 0, event: .release, trigger: "marker")])
        #expect(m.receive(.controlChange(channel: 3, controller: 64, value: 0), at: 4) == [])
    }

    @Test func aLongPressFiresWhileHeldAndNoPress() {
        var m = MIDIMapper([hold])
        #expect(m.receive(.noteOn(channel: 1, note: 40, velocity: 100), at: 1000) == [])
        #expect(m.nextDeadline == 1600)
        #expect(m.advance(to: 1599) == [])
        #expect(m.advance(to: 1600) == [.init(mapping: 0, event: .longPress, trigger: "mute-out")])
        #expect(m.receive(.noteOff(channel: 1, note: 40, velocity: 0), at: 2000) == [.init(mapping: 0, event: .release, trigger: nil)])
        #expect(m.nextDeadline == nil)
    }

    @Test func aShortPressOfAKeyWithALongPressFiresAtTheRelease() {
        var m = MIDIMapper([hold])
        _ = m.receive(.noteOn(channel: 1, note: 40, velocity: 100), at: 1000)
        #expect(m.receive(.noteOff(channel: 1, note: 40, velocity: 0), at: 1200)
            == [.init(mapping: 0, event: .press, trigger: "mute"), .init(mapping: 0, event: .release, trigger: nil)])
    }

    @Test func oneMessageFiresEveryMappingAboutIt() {
        var m = MIDIMapper([pad, MIDIMapping(control: .note(36), channel: nil, release: "marker")])
        #expect(m.receive(.noteOn(channel: 10, note: 36, velocity: 100), at: 0)
            == [.init(mapping: 0, event: .press, trigger: "mute"), .init(mapping: 1, event: .press, trigger: nil)])
        #expect(m.receive(.noteOff(channel: 10, note: 36, velocity: 0), at: 1)
            == [.init(mapping: 0, event: .release, trigger: nil), .init(mapping: 1, event: .release, trigger: "marker")])
    }

    @Test(arguments: [(TriggerState.selected, true), (.alternate, true), (.error, true), (.normal, false), (.disabled, false)])
    func aNoteShowsAState(state: TriggerState, lit: Bool) {
        let m = MIDIMapper([pad])
        #expect(m.feedback(trigger: "mute", state: state)
            == [lit ? .noteOn(channel: 10, note: 36, velocity: 127) : .noteOff(channel: 10, note: 36, velocity: 0)])
    }

    @Test func aControllerShowsAStateAsValue127Or0() {
        let m = MIDIMapper([MIDIMapping(control: .controller(20), channel: 2, press: "record")])
        #expect(m.feedback(trigger: "record", state: .selected) == [.controlChange(channel: 2, controller: 20, value: 127)])
        #expect(m.feedback(trigger: "record", state: .normal) == [.controlChange(channel: 2, controller: 20, value: 0)])
        #expect(m.feedback(trigger: "record", state: nil) == [.controlChange(channel: 2, controller: 20, value: 0)], "a trigger gone is dark")
    }

    @Test func everyMappingNamingTheTriggerShowsItOnce() {
        let m = MIDIMapper([pad, pedal, hold, MIDIMapping(control: .note(36), channel: 10, release: "mute")])
        #expect(m.feedback(trigger: "mute", state: .selected)
            == [.noteOn(channel: 10, note: 36, velocity: 127), .noteOn(channel: 1, note: 40, velocity: 127)])
        #expect(m.feedback(trigger: "marker", state: .selected) == [.controlChange(channel: 1, controller: 64, value: 127)])
        #expect(m.feedback(trigger: "play", state: .selected) == [])
        #expect(m.triggers == ["mute", "record", "marker", "mute-out"])
    }

    @Test func anyChannelAnswersOnTheChannelLastHeard() {
        var m = MIDIMapper([pedal])
        _ = m.receive(.controlChange(channel: 7, controller: 64, value: 127), at: 0)
        #expect(m.feedback(trigger: "record", state: .selected) == [.controlChange(channel: 7, controller: 64, value: 127)])
    }
}
