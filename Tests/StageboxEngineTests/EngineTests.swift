import Testing
@testable import StageboxEngine

@Suite struct EngineTests {
    @Test func builtinPortsExist() {
        let h = EngineHarness(inputs: 2, outputs: 4)
        #expect(h.engine.ports.map(\.name) == ["codec.in", "tone", "codec.out"])
        #expect(h.engine.ports.map(\.kind) == [.sender, .sender, .receiver])
        #expect(h.engine.ports.map(\.channels) == [2, 1, 4])
    }

    @Test func passthroughCopiesChannelForChannel() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        let out = h.period { c, i in Float(i) / 100 * (c == 0 ? 1 : -1) }
        #expect(out[0] == (0..<64).map { Float($0) / 100 })
        #expect(out[1] == (0..<64).map { -Float($0) / 100 })
    }

    @Test func nothingConnectedIsSilence() {
        var h = EngineHarness()
        let out = h.period { _, _ in 0.5 }
        #expect(out.allSatisfy { $0.allSatisfy { $0 == 0 } })
    }

    @Test func aReceiverMixesItsSourcesAndClamps() throws {
        var h = EngineHarness()
        try h.engine.addPort(PortDescriptor(name: "a.out", title: "A", kind: .sender, channels: 2),
                             processor: ConstantSender(0.25))
        try h.engine.connect(from: "codec.in", to: "codec.out")
        try h.engine.connect(from: "a.out", to: "codec.out")
        #expect(h.period { _, _ in 0.5 }[0].allSatisfy { $0 == 0.75 })
        // 0.9 + 0.25 leaves the bus as 1.
        let loud = h.period { c, _ in c == 0 ? 0.9 : -1.5 }
        #expect(loud[0].allSatisfy { $0 == 1 })
        #expect(loud[1].allSatisfy { $0 == -1 })
    }

    @Test func monoIsCopiedToEveryChannelAndManyAreAveragedToMono() throws {
        var h = EngineHarness(inputs: 1, outputs: 2)
        try h.engine.connect(from: "codec.in", to: "codec.out")
        let out = h.period { _, i in Float(i) / 64 }
        #expect(out[0] == out[1] && out[0][32] == 0.5)

        var m = EngineHarness(inputs: 4, outputs: 1)
        try m.engine.connect(from: "codec.in", to: "codec.out")
        #expect(m.period { c, _ in Float(c) / 4 }[0].allSatisfy { $0 == (0 + 0.25 + 0.5 + 0.75) / 4 })
    }

    @Test func otherChannelCountsDoNotConnect() throws {
        let h = EngineHarness(inputs: 2, outputs: 3)
        #expect(throws: EngineError.channelMismatch(from: "codec.in", fromChannels: 2, to: "codec.out", toChannels: 3)) {
            try h.engine.connect(from: "codec.in", to: "codec.out")
        }
    }

    @Test func muteFadesOutOverOnePeriodThenIsSilent() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        try h.engine.setMuted("codec.in", true)
        #expect(try h.engine.isMuted("codec.in"))
        let fading = h.period { _, _ in 1 }[0]
        #expect(fading.first! > 0.95 && fading.last! == 0)
        #expect(zip(fading, fading.dropFirst()).allSatisfy { $0 >= $1 }, "a ramp down, no step")
        #expect(h.period { _, _ in 1 }[0].allSatisfy { $0 == 0 })
        try h.engine.setMuted("codec.in", false)
        let back = h.period { _, _ in 1 }[0]
        #expect(back.first! < 0.05 && back.last! == 1)
        #expect(h.period { _, _ in 1 }[0].allSatisfy { $0 == 1 })
    }

    @Test func mutingAReceiverSilencesItsOutput() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        try h.engine.setMuted("codec.out", true)
        h.period { _, _ in 1 }
        #expect(h.period { _, _ in 1 }[1].allSatisfy { $0 == 0 })
    }

    @Test func aFilterProcessesInPlaceOnTheWay() throws {
        var h = EngineHarness()
        let filter = GainFilter(0.5)
        try h.engine.addPort(PortDescriptor(name: "fx.half", title: "Half", kind: .filter, channels: 2),
                             processor: filter)
        try h.engine.connect(from: "codec.in", to: "fx.half")
        try h.engine.connect(from: "fx.half", to: "codec.out")
        #expect(h.period { _, _ in 0.5 }[0].allSatisfy { $0 == 0.25 })
        #expect(filter.calls == 1)
    }

    /// One connection that carries every channel at unity is copied, not mixed: the receiver's
    /// clamp is made in the same pass, and must treat every value as the mix path does.
    @Test func aReceiverFedByOneWholeConnectionClampsWhatItCopies() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        let values: [Float] = [2, -3, .nan, .infinity, -.infinity, 0.5, -0.25, 1, -1, .greatestFiniteMagnitude]
        for _ in 0..<2 {
            let out = h.period { c, i in c == 0 ? values[i % values.count] : -values[i % values.count] }
            for i in 0..<64 {
                let x = values[i % values.count]
                #expect(out[0][i] == (x.isNaN ? 0 : min(max(x, -1), 1)), "frame \(i): \(x)")
                #expect(out[1][i] == (x.isNaN ? 0 : min(max(-x, -1), 1)), "frame \(i): \(-x)")
            }
        }
    }

    /// Which nodes copy their one input, decided when the snapshot is built: a whole connection
    /// at unity (a mono one into a mono port too) does; one that fades, a channel selection into
    /// a wider port, or a second source does not.
    @Test func onlyAWholeUnityConnectionIsCopied() {
        func port(_ name: String, _ kind: PortKind, _ channels: Int) -> Port {
            Port(descriptor: PortDescriptor(name: name, title: name, kind: kind, channels: channels), capacity: 64, processor: nil)
        }
        let a = port("a", .sender, 2), b = port("b", .sender, 2), out = port("out", .receiver, 2)
        let m = port("m", .sender, 1), mono = port("mono", .receiver, 1)
        func copies(_ edges: [Connection], fades: [Connection: (Float, Float)] = [:]) -> [String: Bool] {
            let nodes = GraphPlanner.snapshot(ports: [a, b, out, m, mono], edges: edges, fades: fades).nodes
            return Dictionary(uniqueKeysWithValues: nodes.map { ($0.port.descriptor.name, $0.copiesItsInput) })
        }
        let whole = Connection(from: "a", to: "out"), monoWhole = Connection(from: "m", to: "mono")
        #expect(copies([whole, monoWhole])["out"] == true)
        #expect(copies([whole, monoWhole])["mono"] == true)
        #expect(copies([whole], fades: [whole: (0, 1)])["out"] == false, "a connection fading in")
        #expect(copies([whole, Connection(from: "b", to: "out")])["out"] == false, "two sources")
        var selected = Connection(from: "a", to: "out")
        selected.fromChannel = 2
        selected.toChannel = 1
        #expect(copies([selected])["out"] == false, "one channel of two")
        #expect(copies([])["out"] == false, "no source")
    }

    /// Clamped, then muted, on both paths: a receiver fed by one connection and the same
    /// receiver fed by two (the second silent) put out the same samples through a mute's ramp.
    @Test func theMuteRampIsTheSameWhetherTheInputIsCopiedOrMixed() throws {
        var copied = EngineHarness(), mixed = EngineHarness()
        try copied.engine.connect(from: "codec.in", to: "codec.out")
        try mixed.engine.addPort(PortDescriptor(name: "z.out", title: "Zero", kind: .sender, channels: 2),
                                 processor: ConstantSender(0))
        try mixed.engine.connect(from: "codec.in", to: "codec.out")
        try mixed.engine.connect(from: "z.out", to: "codec.out")
        for muted in [true, false] {
            try copied.engine.setMuted("codec.out", muted)
            try mixed.engine.setMuted("codec.out", muted)
            let a = copied.period { _, i in 2 - Float(i) / 16 }, b = mixed.period { _, i in 2 - Float(i) / 16 }
            #expect(a == b)
            #expect(a[0].allSatisfy { abs($0) <= 1 })
        }
    }

    /// A filter fed by one whole connection gets the copy as it is, not clamped: the clamp is
    /// for what leaves the bus.
    @Test func aFilterFedByOneWholeConnectionGetsItUnclamped() throws {
        var h = EngineHarness()
        try h.engine.addPort(PortDescriptor(name: "fx.quarter", title: "Quarter", kind: .filter, channels: 2),
                             processor: GainFilter(0.25))
        try h.engine.connect(from: "codec.in", to: "fx.quarter")
        try h.engine.connect(from: "fx.quarter", to: "codec.out")
        for _ in 0..<2 { #expect(h.period { _, _ in 2 }.allSatisfy { $0.allSatisfy { $0 == 0.5 } }) }
    }

    /// A connection that carries one channel of a two-channel port is not a whole copy: the
    /// other channel of the receiver stays silent, period after period.
    @Test func oneChannelOfAConnectionLeavesTheOtherSilent() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in:2", to: "codec.out:1")
        for _ in 0..<3 {
            let out = h.period { c, _ in c == 0 ? 0.5 : 0.25 }
            #expect(out[0].allSatisfy { $0 == 0.25 } && out[1].allSatisfy { $0 == 0 })
        }
    }

    @Test func anUnconnectedFilterIsNotRun() throws {
        var h = EngineHarness()
        let filter = GainFilter(0.5)
        try h.engine.addPort(PortDescriptor(name: "fx.idle", title: "Idle", kind: .filter, channels: 2),
                             processor: filter)
        h.period()
        #expect(filter.calls == 0)
    }

    @Test func aReceiverPortGetsTheMix() throws {
        var h = EngineHarness(tone: .silence)
        let rec = CapturingReceiver()
        try h.engine.addPort(PortDescriptor(name: "rec.in", title: "Recorder", kind: .receiver, channels: 1),
                             processor: rec)
        try h.engine.connect(from: "codec.in", to: "rec.in")
        h.period { c, _ in c == 0 ? 0.5 : 0.25 }
        #expect(rec.last == [[Float](repeating: 0.375, count: 64)])
    }

    @Test func theToneSenderMakesASineAtItsLevel() throws {
        var h = EngineHarness(tone: .sine)
        try h.engine.connect(from: "tone", to: "codec.out")
        var peak: Float = 0
        for _ in 0..<20 { peak = max(peak, h.period()[0].map(abs).max()!) }
        #expect(abs(peak - 0.1) < 0.002, "-20 dBFS is 0.1")
    }

    @Test func refusesWhatMakesNoSense() throws {
        let h = EngineHarness()
        let e = h.engine
        try e.addPort(PortDescriptor(name: "f.one", title: "", kind: .filter, channels: 2), processor: GainFilter(1))
        try e.addPort(PortDescriptor(name: "f.two", title: "", kind: .filter, channels: 2), processor: GainFilter(1))
        try e.connect(from: "f.one", to: "f.two")
        #expect(throws: EngineError.cycle(from: "f.two", to: "f.one")) { try e.connect(from: "f.two", to: "f.one") }
        #expect(throws: EngineError.alreadyConnected(from: "f.one", to: "f.two")) { try e.connect(from: "f.one", to: "f.two") }
        #expect(throws: EngineError.wrongDirection(from: "codec.out", fromKind: .receiver, to: "codec.in", toKind: .sender)) {
            try e.connect(from: "codec.out", to: "codec.in")
        }
        #expect(throws: EngineError.noSuchPort("nope")) { try e.connect(from: "nope", to: "codec.out") }
        #expect(throws: EngineError.notConnected(from: "codec.in", to: "codec.out")) {
            try e.disconnect(from: "codec.in", to: "codec.out")
        }
        #expect(throws: EngineError.portExists("f.one")) {
            try e.addPort(PortDescriptor(name: "f.one", title: "", kind: .filter, channels: 2), processor: nil)
        }
        #expect(throws: EngineError.portRule(.invalidPortName("bad name"))) {
            try e.addPort(PortDescriptor(name: "bad name", title: "", kind: .sender, channels: 2), processor: nil)
        }
        #expect(throws: EngineError.builtinPort("codec.in")) { try e.removePort("codec.in") }
        try e.removePort("f.one")
        #expect(e.connections.isEmpty, "removing a port removes its connections")
    }
}

@Suite struct PortMeterTests {
    @Test func metersHoldThePeakAndGiveTheRMS() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        h.engine.watchMeters(settleMilliseconds: 0)
        h.period { c, i in c == 0 ? (i == 10 ? -0.8 : 0.5) : 0 }
        h.period { _, _ in 0.1 }
        let m = try h.engine.meter("codec.out").read()
        #expect(m.count == 2)
        #expect(m[0].peak == 0.8, "the peak of both periods is held")
        #expect(abs(m[0].rms - 0.1) < 1e-6, "the RMS is the last period's")
        #expect(try h.engine.meter("codec.out").read()[0].peak == 0, "reading resets the peak")
        #expect(throws: EngineError.noSuchPort("x")) { _ = try h.engine.meter("x") }
    }

    /// Nobody reading the meters, they are not measured; asked for, they are, for a while.
    @Test func metersAreMeasuredOnlyWhileWatched() throws {
        var h = EngineHarness()
        try h.engine.connect(from: "codec.in", to: "codec.out")
        h.period { _, _ in 0.5 }
        #expect(try h.engine.meter("codec.out").read()[0].peak == 0, "unwatched: not measured")
        h.engine.watchMeters(seconds: 1, settleMilliseconds: 0)
        h.period { _, _ in 0.5 }
        #expect(try h.engine.meter("codec.out").read()[0].peak == 0.5)
        let periodsPerSecond = h.engine.settings.sampleRate / h.engine.settings.period
        for _ in 0..<periodsPerSecond + 1 { h.period { _, _ in 0.25 } }
        #expect(try h.engine.meter("codec.out").read()[0].peak == 0.25, "measured until the second was over")
        h.period { _, _ in 0.75 }
        #expect(try h.engine.meter("codec.out").read()[0].peak == 0, "and not after it")
    }
}

@Suite struct RestingSenderTests {
    /// The test tone with nothing connected is not computed, and its meter reads silence; once
    /// connected it runs, and it rests again when the connection goes.
    @Test func theToneRestsWhileNobodyHearsIt() throws {
        var h = EngineHarness(tone: .sine)
        h.engine.watchMeters(settleMilliseconds: 0)
        let tone = h.engine.ports.first { $0.name == "tone" }!
        #expect(tone.kind == .sender)
        h.period { _, _ in 0 }
        #expect(try h.engine.meter("tone").read()[0].rms == 0, "unheard: silent")
        try h.engine.connect(from: "tone", to: "codec.out")
        h.period { _, _ in 0 }
        h.period { _, _ in 0 }
        #expect(try h.engine.meter("tone").read()[0].rms > 0.05, "heard: the -20 dBFS tone")
        #expect(try h.engine.meter("codec.out").read()[0].peak > 0.05)
        try h.engine.disconnect(from: "tone", to: "codec.out")
        h.period { _, _ in 0 }
        h.period { _, _ in 0 }
        #expect(try h.engine.meter("tone").read()[0].rms == 0, "unheard again")
    }
}
