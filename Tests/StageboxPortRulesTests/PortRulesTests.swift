import Testing
import StageboxPortRules

@Suite struct PortRulesTests {
    @Test func portNamesAreLettersDigitsDotsUnderscoresAndDashes() throws {
        try PortRules.checkPortName("codec.in")
        try PortRules.checkPortName("my_app-2.mic")
        try PortRules.checkPortName(String(repeating: "a", count: 64))
        for bad in ["", "bad name", "a:1", "ä", String(repeating: "a", count: 65)] {
            #expect(throws: PortRuleViolation.invalidPortName(bad)) { try PortRules.checkPortName(bad) }
        }
    }

    @Test func oneAndThirtyTwoChannelsAreAcceptedZeroAndThirtyThreeRefused() throws {
        try PortRules.checkChannels(1, port: "p")
        try PortRules.checkChannels(32, port: "p")
        #expect(throws: PortRuleViolation.channelCount(port: "p", 0)) { try PortRules.checkChannels(0, port: "p") }
        #expect(throws: PortRuleViolation.channelCount(port: "p", 33)) { try PortRules.checkChannels(33, port: "p") }
        #expect(PortRuleViolation.channelCount(port: "p", 33).description == "port p: 33 channels is out of range (1 to 32)")
    }

    @Test func reservedNamesAreRefusedAsClientsAndAsOwners() throws {
        try PortRules.checkClientName("player")
        for name in ["codec", "stagebox", "tone"] {
            #expect(throws: PortRuleViolation.reservedName(name)) { try PortRules.checkClientName(name) }
        }
        #expect(throws: PortRuleViolation.invalidClientName("a.b")) { try PortRules.checkClientName("a.b") }
        try PortRules.checkOwner(of: "player.out")
        #expect(throws: PortRuleViolation.reservedName("codec")) { try PortRules.checkOwner(of: "codec.extra") }
        #expect(throws: PortRuleViolation.reservedName("tone")) { try PortRules.checkOwner(of: "tone") }
    }

    @Test func aClientPortHasNoDotOfItsOwnAndFitsTheNameLength() throws {
        try PortRules.checkClientPortName("out", client: "player")
        #expect(throws: PortRuleViolation.invalidPortName("a.b")) { try PortRules.checkClientPortName("a.b", client: "p") }
        let long = String(repeating: "x", count: 60)
        #expect(throws: PortRuleViolation.invalidPortName("player.\(long)")) {
            try PortRules.checkClientPortName(long, client: "player")
        }
    }

    @Test func endpointsAreAPortOrAPortAndAChannelFromOne() throws {
        #expect(try PortEndpoint(parsing: "codec.in") == PortEndpoint(port: "codec.in"))
        #expect(try PortEndpoint(parsing: "codec.in:1") == PortEndpoint(port: "codec.in", channel: 1))
        #expect(try PortEndpoint(parsing: "rec.in:32") == PortEndpoint(port: "rec.in", channel: 32))
        #expect(PortEndpoint(port: "rec.in", channel: 2).description == "rec.in:2")
        #expect(PortEndpoint(port: "rec.in").description == "rec.in")
        for bad in ["codec.in:0", "codec.in:33", "codec.in:", ":1", "codec.in:x", "codec.in:-1", "codec.in:+1", "a:0001"] {
            #expect(throws: PortRuleViolation.invalidEndpoint(bad)) { try PortEndpoint(parsing: bad) }
        }
    }
}
