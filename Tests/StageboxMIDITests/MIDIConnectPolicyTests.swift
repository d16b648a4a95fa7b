import Testing
@testable import StageboxMIDI

/// Which clients `[midi] connect` connects.
@Suite struct MIDIConnectPolicyTests {
    @Test func allIsEveryoneButTheSystemStageboxAndMidiThrough() {
        #expect(MIDIConnectPolicy.all.connects(client: 20, name: "Virtual Raw MIDI 1-0", own: 128))
        #expect(!MIDIConnectPolicy.all.connects(client: 0, name: "System", own: 128))
        #expect(!MIDIConnectPolicy.all.connects(client: 128, name: "Stagebox", own: 128))
        #expect(!MIDIConnectPolicy.all.connects(client: 14, name: "Midi Through", own: 128))
    }

    @Test func noneIsNoOne() {
        #expect(!MIDIConnectPolicy.none.connects(client: 20, name: "Virtual Raw MIDI 1-0", own: 128))
    }

    @Test func aListNamesClientsByNameOrItsBeginning() {
        let policy = MIDIConnectPolicy.clients(["nanoKONTROL2", "Virtual Raw MIDI", "Midi Through"])
        #expect(policy.connects(client: 24, name: "nanoKONTROL2", own: 128))
        #expect(policy.connects(client: 20, name: "Virtual Raw MIDI 1-0", own: 128))
        #expect(policy.connects(client: 14, name: "Midi Through", own: 128), "named explicitly")
        #expect(!policy.connects(client: 25, name: "Launchpad", own: 128))
        #expect(!policy.connects(client: 24, name: "nanoKONTROL", own: 128), "a shorter name is another client")
        #expect(!MIDIConnectPolicy.clients(["System"]).connects(client: 0, name: "System", own: 128))
    }
}
