import Testing
@testable import StageboxConfig

/// `[midi]` and `[[midi.map]]`: values, defaults, and each problem at its line.
@Suite struct MIDIConfigTests {
    private func problems(_ text: String) -> [String] {
        ConfigParser.parse(text, file: "box.toml").1.map(\.description)
    }

    @Test func aPedalAndAPadAreRead() {
        let (config, problems) = ConfigParser.parse("""
            [midi]
            connect = "all"

            [[midi.map]]
            cc = 64
            channel = 1
            press = "record"

            [[midi.map]]
            note = 36
            channel = "any"
            press = "mute"
            release = "marker"
            long_press = "mute-out"
            long_press_ms = 900
            """, file: "box.toml")
        #expect(problems.isEmpty, "\(problems)")
        var pedal = MIDIMapEntry(cc: 64, channel: 1, sourceLine: 4, number: 1)
        pedal.press = "record"
        var pad = MIDIMapEntry(note: 36, channel: nil, sourceLine: 9, number: 2)
        pad.press = "mute"
        pad.release = "marker"
        pad.longPress = "mute-out"
        pad.longPressMs = 900
        #expect(config.midi == MIDISection(connect: .all, maps: [pedal, pad]))
    }

    @Test func withoutAMIDISectionThereIsNoMIDI() {
        #expect(ConfigParser.parse("[audio]\nrate = 48000\n", file: "f").0.midi == nil)
    }

    @Test func aMapAloneConnectsAllOnAnyChannel() {
        let (config, problems) = ConfigParser.parse("[[midi.map]]\nnote = 60\nrelease = \"call.hangup\"\n", file: "f")
        #expect(problems.isEmpty, "\(problems)")
        #expect(config.midi?.connect == .all)
        #expect(config.midi?.maps.first?.channel == nil)
        #expect(config.midi?.maps.first?.longPressMs == 600)
    }

    @Test(arguments: [("\"none\"", MIDIConnectSetting.none), ("\"all\"", .all),
                      ("[\"nanoKONTROL2\", \"Virtual Raw MIDI\"]", .clients(["nanoKONTROL2", "Virtual Raw MIDI"]))])
    func connectIsAllNoneOrAList(text: String, expected: MIDIConnectSetting) {
        let (config, problems) = ConfigParser.parse("[midi]\nconnect = \(text)\n", file: "f")
        #expect(problems.isEmpty, "\(problems)")
        #expect(config.midi?.connect == expected)
    }

    @Test(arguments: [
        ("connect = \"some\"", "box.toml:2: midi.connect: 'some' is not a known value (allowed: \"all\" | \"none\" | [\"nanoKONTROL2\", …])"),
        ("connect = [\"a\", \"\"]", "box.toml:2: midi.connect: every client name must be a string that is not empty (allowed: \"all\" | \"none\" | [\"nanoKONTROL2\", …])"),
        ("connect = [\"a\", 3]", "box.toml:2: midi.connect: every client name must be a string that is not empty (allowed: \"all\" | \"none\" | [\"nanoKONTROL2\", …])"),
        ("connect = true", "box.toml:2: midi.connect: must be \"all\", \"none\" or an array of client names, not bool (allowed: \"all\" | \"none\" | [\"nanoKONTROL2\", …])"),
        ("port = 3", "box.toml:2: midi.port: unknown key (allowed: connect, map)"),
    ])
    func badMIDIKeys(line: String, expected: String) {
        #expect(problems("[midi]\n\(line)\n") == [expected])
    }

    @Test(arguments: [
        ("note = 128\npress = \"mute\"", "box.toml:2: midi.map[1].note: 128 is out of range (allowed: 0–127)"),
        ("note = -1\npress = \"mute\"", "box.toml:2: midi.map[1].note: -1 is out of range (allowed: 0–127)"),
        ("cc = 200\npress = \"mute\"", "box.toml:2: midi.map[1].cc: 200 is out of range (allowed: 0–127)"),
        ("cc = \"64\"\npress = \"mute\"", "box.toml:2: midi.map[1].cc: must be an integer, not string (allowed: 0–127)"),
        ("note = 36\ncc = 64\npress = \"mute\"", "box.toml:3: midi.map[1].cc: give note or cc, not both"),
        ("channel = 10\npress = \"mute\"", "box.toml:1: midi.map[1].note: missing: give note or cc"),
        ("note = 36\nchannel = 0\npress = \"mute\"", "box.toml:3: midi.map[1].channel: 0 is out of range (allowed: 1–16 or \"any\")"),
        ("note = 36\nchannel = 17\npress = \"mute\"", "box.toml:3: midi.map[1].channel: 17 is out of range (allowed: 1–16 or \"any\")"),
        ("note = 36\nchannel = \"all\"\npress = \"mute\"", "box.toml:3: midi.map[1].channel: 'all' is not a channel (allowed: 1–16 or \"any\")"),
        ("note = 36\nchannel = 1.5\npress = \"mute\"", "box.toml:3: midi.map[1].channel: must be an integer or \"any\", not floating-point number (allowed: 1–16 or \"any\")"),
        ("note = 36\nchannel = 10", "box.toml:1: midi.map[1].press: missing: give press, release or long_press"),
        ("note = 36\npress = \"\"", "box.toml:3: midi.map[1].press: missing: give press, release or long_press"),
        ("note = 36\npress = \"explode\"", "box.toml:3: midi.map[1].press: no built-in trigger named 'explode' (built-in: record, mute, mute-out, play, marker, copy-takes, update; a client's trigger is CLIENT.TRIGGER, like call.mic-mute)"),
        ("note = 36\nrelease = \"a.b.c\"", "box.toml:3: midi.map[1].release: invalid trigger name 'a.b.c' (CLIENT.TRIGGER: letters, digits, '_' and '-' on each side of one '.')"),
        ("note = 36\nlong_press = 5", "box.toml:3: midi.map[1].long_press: must be a string, not integer"),
        ("note = 36\npress = \"mute\"\nlong_press_ms = 50", "box.toml:4: midi.map[1].long_press_ms: 50 is out of range (allowed: 100–10000)"),
        ("note = 36\npress = \"mute\"\nvelocity = 3", "box.toml:4: midi.map[1].velocity: unknown key (allowed: note, cc, channel, press, release, long_press, long_press_ms)"),
    ])
    func badMapEntries(body: String, expected: String) {
        let text = "[[midi.map]]\n\(body)\n"
        #expect(problems(text) == [expected])
        #expect(ConfigParser.parse(text, file: "f").0.midi?.maps == [], "an entry with a problem is left out")
    }

    @Test func problemsNameTheRightEntry() {
        let p = problems("""
            [midi]
            connect = "none"

            [[midi.map]]
            note = 36
            press = "mute"

            [[midi.map]]
            cc = 64
            channel = 99
            press = "record"
            """)
        #expect(p == ["box.toml:10: midi.map[2].channel: 99 is out of range (allowed: 1–16 or \"any\")"])
    }

    @Test func mapMustBeAnArrayOfTables() {
        #expect(problems("[midi]\nmap = 3\n") == ["box.toml:1: midi.map: must be an array of tables, written [[midi.map]]"])
    }
}
