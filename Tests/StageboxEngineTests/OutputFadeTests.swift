import Testing
@testable import StageboxEngine

/// The codec outputs' fade: a ramp with no step larger than the signal's own, in and out.
@Suite struct OutputFadeTests {
    /// An engine whose codec outputs carry a constant 0.5 (a DC tone is the worst case for a step).
    private func engine(fadeMs: Double) throws -> Engine {
        let e = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 1, outputs: 1,
                                                fadeMilliseconds: fadeMs))
        try e.connect(from: "codec.in", to: "codec.out")
        return e
    }

    private func period(_ e: Engine, _ n: Int) -> [Float] {
        e.captureBuffer.channel(0).update(repeating: 0.5, count: 64)
        e.process(frames: 64, cycle: CycleInfo(framePosition: Int64(n * 64), hostTimeNanos: 0, sampleRate: 48000))
        return Array(UnsafeBufferPointer(start: e.playbackBuffer.channel(0), count: 64))
    }

    @Test func fadesInOverItsLengthWithoutAStep() throws {
        let e = try engine(fadeMs: 20) // 960 frames
        var out: [Float] = []
        for n in 0..<20 { out += period(e, n) }
        #expect(out[0] > 0 && out[0] < 0.001, "the first sample is near silence: \(out[0])")
        let steps = zip(out, out.dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! <= 0.5 * 1.5 / 960, "no step larger than the ramp's (the last is at most one and a half)")
        #expect(out[959] == 0.5 && out[1279] == 0.5, "full gain after 20 ms")
        #expect(e.outputFade.isOpen)
    }

    @Test func fadesOutToSilenceAndBackIn() throws {
        let e = try engine(fadeMs: 10) // 480 frames
        for n in 0..<10 { _ = period(e, n) }
        e.outputFade.fadeOut()
        var out: [Float] = []
        for n in 10..<20 { out += period(e, n) }
        #expect(out[0] < 0.5 && out[0] > 0.49)
        #expect(out[479] == 0 && out.suffix(100).allSatisfy { $0 == 0 }, "silent after 10 ms")
        #expect(zip(out, out.dropFirst()).allSatisfy { abs($1 - $0) <= 0.5 * 1.5 / 480 })
        #expect(e.outputFade.isSilent)
        e.outputFade.fadeInFromSilence()
        let back = period(e, 20)
        #expect(back[0] < 0.002 && back[63] > back[0])
    }

    @Test func noFadeIsBitExact() throws {
        let e = try engine(fadeMs: 0)
        #expect(period(e, 0).allSatisfy { $0 == 0.5 }, "fade_ms = 0 passes the first frame untouched")
    }
}
