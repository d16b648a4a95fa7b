import Testing
import StageboxEngine
import StageboxPortRules

/// The engine's ports: kept in the order they were added, found by name, and held to the port rules.
@Suite struct PortTableTests {
    @Test func portsKeepTheOrderTheyWereAddedInAndAreFoundByName() throws {
        let e = EngineHarness().engine
        for name in ["z.last", "a.first", "m.middle"] {
            try e.addPort(PortDescriptor(name: name, title: name, kind: .sender, channels: 1), processor: ConstantSender(0))
        }
        #expect(e.ports.map(\.name) == ["codec.in", "tone", "codec.out", "z.last", "a.first", "m.middle"])
        try e.removePort("a.first")
        try e.addPort(PortDescriptor(name: "a.first", title: "", kind: .receiver, channels: 2), processor: nil)
        #expect(e.ports.map(\.name) == ["codec.in", "tone", "codec.out", "z.last", "m.middle", "a.first"],
                "a port added again goes to the end")
        #expect(try e.meter("a.first").channels == 2)
        try e.setMuted("m.middle", true)
        #expect(try e.isMuted("m.middle") && !(try e.isMuted("z.last")))
        #expect(throws: EngineError.noSuchPort("a.firs")) { try e.meter("a.firs") }
        #expect(throws: EngineError.noSuchPort("gone")) { try e.removePort("gone") }
    }

    @Test func theEngineHoldsPortsToThePortRules() throws {
        let e = EngineHarness().engine
        func add(_ name: String, _ channels: Int) throws {
            try e.addPort(PortDescriptor(name: name, title: "", kind: .sender, channels: channels), processor: nil)
        }
        try add("one.ch", 1)
        try add("wide.ch", 32)
        #expect(throws: EngineError.portRule(.channelCount(port: "none.ch", 0))) { try add("none.ch", 0) }
        #expect(throws: EngineError.portRule(.channelCount(port: "too.wide", 33))) { try add("too.wide", 33) }
        #expect(throws: EngineError.portRule(.invalidPortName("a:b"))) { try add("a:b", 1) }
        #expect(throws: EngineError.portRule(.reservedName("codec"))) { try add("codec.extra", 1) }
        #expect(throws: EngineError.portRule(.reservedName("stagebox"))) { try add("stagebox.rec", 1) }
        #expect(throws: EngineError.portRule(.reservedName("tone"))) { try add("tone", 1) }
        #expect(e.ports.map(\.name) == ["codec.in", "tone", "codec.out", "one.ch", "wide.ch"])
    }
}
