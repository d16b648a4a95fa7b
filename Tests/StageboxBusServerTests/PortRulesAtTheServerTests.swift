import StageboxClient
import StageboxPortRules
import Testing

extension BusTests {
    /// The bus server holds the ports clients make, and their names, to the port rules, and its
    /// connect request takes `PORT:CHANNEL` like the console.
    @Suite struct PortRulesAtTheServerTests {
        @Test func clientPortsTakeOneTo32ChannelsAndRuleAbidingNames() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("maker")
            let mono = try c.addSender(name: "mono", channels: 1)
            let wide = try c.addReceiver(name: "wide", channels: 32)
            for n in [0, 33] {
                #expect(throws: BusClientError.refused(.badRequest, PortRuleViolation.channelCount(port: "maker.bad", n).description)) {
                    _ = try c.addSender(name: "bad", channels: n)
                }
            }
            #expect(throws: BusClientError.refused(.badRequest, PortRuleViolation.invalidPortName("a b").description)) {
                _ = try c.addSender(name: "a b", channels: 1)
            }
            #expect(throws: BusClientError.refused(.badRequest, PortRuleViolation.invalidPortName("a.b").description)) {
                _ = try c.addSender(name: "a.b", channels: 1)
            }
            #expect([mono.name, wide.name] == ["maker.mono", "maker.wide"])
            #expect(bus.engine.ports.map(\.name) == ["codec.in", "tone", "codec.out", "maker.mono", "maker.wide"])
        }

        @Test func reservedAndMalformedClientNamesAreRefused() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            for name in PortRules.reservedNames {
                #expect(throws: BusClientError.refused(.badRequest, PortRuleViolation.reservedName(name).description)) {
                    _ = try bus.client(name)
                }
            }
            #expect(throws: BusClientError.refused(.badRequest, PortRuleViolation.invalidClientName("a.b").description)) {
                _ = try bus.client("a.b")
            }
            _ = try bus.client("codecs") // only the exact names are reserved
        }

        @Test func aConnectRequestSelectsChannelsAndTheListingShowsThem() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("rec")
            let port = try c.addReceiver(name: "in", channels: 1)
            try c.connect(from: "codec.in:2", to: "\(port.name):1")
            #expect(eventually { port.isConnected }, "a channel connection connects the port")
            try c.connect(from: "codec.in", to: "codec.out")
            let listed = try c.connections().map { "\($0.from) -> \($0.to)" }
            #expect(listed == ["codec.in:2 -> rec.in:1", "codec.in -> codec.out"])
            #expect(throws: BusClientError.refused(.refused, "rec.in has 1 channel (1 to 1): there is no channel 2")) {
                try c.connect(from: "codec.in:1", to: "rec.in:2")
            }
            try c.disconnect(from: "codec.in:2", to: "rec.in:1")
            #expect(try c.connections().map { "\($0.from) -> \($0.to)" } == ["codec.in -> codec.out"])
        }
    }
}
