import Testing
@testable import StageboxConfig

/// `[[connect]]` sections with whole ports or `PORT:CHANNEL`, and the port rules the file is held to.
@Suite struct ConnectionConfigTests {
    private func problems(_ text: String) -> [String] {
        ConfigParser.parse(text, file: "box.toml").1.map(\.description)
    }

    @Test func aConnectionMaySelectAChannelOnEitherSide() {
        let (config, problems) = ConfigParser.parse("""
            [[connect]]
            from = "codec.in:1"
            to = "codec.out:2"

            [[connect]]
            from = "tone"
            to = "codec.out:32"
            """, file: "box.toml")
        #expect(problems.isEmpty)
        #expect(config.connections == [ConnectEntry(from: "codec.in:1", to: "codec.out:2", line: 1, number: 1),
                                       ConnectEntry(from: "tone", to: "codec.out:32", line: 5, number: 2)])
    }

    @Test func aBadChannelOrPortNameIsAProblemAtItsLine() {
        let p = problems("""
            [[connect]]
            from = "codec.in:0"
            to = "codec.out:33"

            [[connect]]
            from = "bad name:1"
            to = "codec.out:x"

            [[connect]]
            from = "codec.in:1"
            to = "codec.out"
            """)
        let syntax = "is not PORT or PORT:CHANNEL (a channel number from 1 to 32)"
        #expect(p == [
            "box.toml:2: connect[1].from: 'codec.in:0' \(syntax)",
            "box.toml:3: connect[1].to: 'codec.out:33' \(syntax)",
            "box.toml:6: connect[2].from: invalid port name 'bad name' (letters, digits, '.', '_' and '-', 1 to 64 characters)",
            "box.toml:7: connect[2].to: 'codec.out:x' \(syntax)",
        ])
        #expect(ConfigParser.parse("[[connect]]\nfrom = \"codec.in:1\"\nto = \"x:0\"\n[[connect]]\nfrom = \"a\"\nto = \"b\"\n",
                                   file: "f").0.connections.map(\.from) == ["a"], "only the good entries are kept")
    }

    @Test func codecChannelCountsFollowThePortRules() {
        let (config, none) = ConfigParser.parse("[audio]\ninputs = 1\noutputs = 32\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.audio.inputs == 1 && config.audio.outputs == 32)
        #expect(problems("[audio]\ninputs = 0\noutputs = 33\n") == [
            "box.toml:2: audio.inputs: 0 is out of range (allowed: 1–32)",
            "box.toml:3: audio.outputs: 33 is out of range (allowed: 1–32)",
        ])
    }

    @Test func problemsComeInLineOrder() {
        let p = problems("""
            [[connect]]
            from = "codec.in:0"
            to = "codec.out"

            [audio]
            colour = "red"
            rate = 1

            [tone]
            frequency = 30000
            """)
        #expect(p.map { $0.split(separator: ":")[1] } == ["2", "6", "7", "10"], "\(p)")
    }
}
