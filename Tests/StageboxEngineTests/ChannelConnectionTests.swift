import Testing
import StageboxEngine
import StageboxPortRules

/// Connections that select channels, `PORT:CHANNEL` (numbered from 1), as JACK users make them.
@Suite struct ChannelConnectionTests {
    /// Channel 1 of codec.in holds 0.5, channel 2 a ramp: the two are told apart sample by sample.
    static func input(_ c: Int, _ i: Int) -> Float { c == 0 ? 0.5 : Float(i) / 128 }
    static let secondChannel = (0..<64).map { Float($0) / 128 }

    /// An engine with codec.in (2 channels) and a mono receiver `rec.in` that keeps what it gets.
    static func withMonoReceiver() throws -> (EngineHarness, CapturingReceiver) {
        let h = EngineHarness(inputs: 2, outputs: 2)
        let rec = CapturingReceiver()
        try h.engine.addPort(PortDescriptor(name: "rec.in", title: "", kind: .receiver, channels: 1), processor: rec)
        return (h, rec)
    }

    @Test func aSourceChannelReachesTheSelectedChannelSampleExact() throws {
        var (h, rec) = try Self.withMonoReceiver()
        try h.engine.connect(from: "codec.in:2", to: "rec.in:1")
        h.period(Self.input)
        #expect(rec.last == [Self.secondChannel], "exactly channel 2's samples")
        #expect(h.engine.connections.map(\.description) == ["codec.in:2 -> rec.in:1"])
    }

    @Test func aChannelConnectionFadesInAndOutOverOnePeriod() throws {
        var (h, rec) = try Self.withMonoReceiver()
        h.period() // audio is running: from now on every change fades
        try h.engine.connect(from: "codec.in:2", to: "rec.in:1")
        h.period(Self.input)
        let up: Float = 1 / 64
        #expect(rec.last == [Self.secondChannel.enumerated().map { i, x in x * (0 + up * Float(i)) }])
        h.period(Self.input)
        #expect(rec.last == [Self.secondChannel])
        try h.engine.disconnect(from: "codec.in:2", to: "rec.in:1")
        h.period(Self.input)
        let down: Float = -1 / 64
        #expect(rec.last == [Self.secondChannel.enumerated().map { i, x in x * (1 + down * Float(i)) }])
        h.period(Self.input)
        #expect(rec.last == [[Float](repeating: 0, count: 64)])
    }

    @Test func aSelectedChannelIsAMonoEndForTheMapping() throws {
        var h = EngineHarness(inputs: 2, outputs: 2)
        try h.engine.connect(from: "codec.in:1", to: "codec.out:2")
        #expect(h.period(Self.input) == [[Float](repeating: 0, count: 64), [Float](repeating: 0.5, count: 64)],
                "one channel into one channel; the other output stays silent")
        try h.engine.disconnect(from: "codec.in:1", to: "codec.out:2")
        try h.engine.connect(from: "codec.in:2", to: "codec.out")
        h.period(Self.input)
        #expect(h.period(Self.input) == [Self.secondChannel, Self.secondChannel], "a channel is copied to every channel")
        try h.engine.disconnect(from: "codec.in:2", to: "codec.out")
        try h.engine.connect(from: "codec.in", to: "codec.out:1")
        h.period(Self.input)
        let average = (0..<64).map { (0.5 + Float($0) / 128) / 2 }
        #expect(h.period(Self.input) == [average, [Float](repeating: 0, count: 64)], "every channel averaged into one")
    }

    @Test func aChannelOutOfThePortsRangeIsRefusedNamingThePortAndItsChannels() throws {
        let (h, _) = try Self.withMonoReceiver()
        let e = h.engine
        #expect(throws: EngineError.noSuchChannel(port: "codec.in", channel: 3, channels: 2)) {
            try e.connect(from: "codec.in:3", to: "rec.in")
        }
        #expect(throws: EngineError.noSuchChannel(port: "rec.in", channel: 2, channels: 1)) {
            try e.connect(from: "codec.in:1", to: "rec.in:2")
        }
        #expect(EngineError.noSuchChannel(port: "codec.in", channel: 3, channels: 2).description
                == "codec.in has 2 channels (1 to 2): there is no channel 3")
        #expect(throws: EngineError.portRule(.invalidEndpoint("codec.in:0"))) { try e.connect(from: "codec.in:0", to: "rec.in") }
        #expect(throws: EngineError.portRule(.invalidEndpoint("codec.in:33"))) { try e.connect(from: "codec.in:33", to: "rec.in") }
        #expect(throws: EngineError.noSuchPort("mic")) { try e.connect(from: "mic:1", to: "rec.in") }
        #expect(e.connections.isEmpty)
    }

    @Test func wholePortAndChannelConnectionsAreDistinctButNeverMixAChannelTwice() throws {
        var h = EngineHarness(inputs: 2, outputs: 2)
        let e = h.engine
        try e.connect(from: "codec.in", to: "codec.out")
        // A cross-feed adds channel 1 into output 2, which the whole-port connection does not carry.
        try e.connect(from: "codec.in:1", to: "codec.out:2")
        #expect(e.connections.map(\.description) == ["codec.in -> codec.out", "codec.in:1 -> codec.out:2"])
        let whole = Connection(from: "codec.in", to: "codec.out")
        #expect(throws: EngineError.overlaps(Connection(PortEndpoint(port: "codec.in", channel: 1),
                                                        PortEndpoint(port: "codec.out", channel: 1)), existing: whole)) {
            try e.connect(from: "codec.in:1", to: "codec.out:1")
        }
        #expect(throws: EngineError.alreadyConnected(from: "codec.in:1", to: "codec.out:2")) {
            try e.connect(from: "codec.in:1", to: "codec.out:2")
        }
        let out = h.period(Self.input)
        #expect(out == [[Float](repeating: 0.5, count: 64), Self.secondChannel.map { $0 + 0.5 }])
        // Disconnecting the whole ports leaves the channel connection.
        try e.disconnect(from: "codec.in", to: "codec.out")
        #expect(e.connections.map(\.description) == ["codec.in:1 -> codec.out:2"])
        #expect(throws: EngineError.notConnected(from: "codec.in:2", to: "codec.out:2")) {
            try e.disconnect(from: "codec.in:2", to: "codec.out:2")
        }
    }
}
