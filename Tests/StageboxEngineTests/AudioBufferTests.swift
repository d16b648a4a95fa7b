import Testing
@testable import StageboxEngine

/// What leaves the bus is clamped, and what a client wrote is made finite: every kind of value,
/// at every position of a block (the vector loop and the samples after it).
@Suite struct AudioBufferTests {
    private static let values: [Float] = [
        0, -0, 0.5, -0.5, 1, -1, 1.0000001, -1.0000001, 2, -2, 1e30, -1e30,
        .infinity, -.infinity, .nan, -.nan, .signalingNaN, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, Float(bitPattern: 0x7FC0_1234),
    ]

    private func filled(_ frames: Int, offset: Int) -> AudioBuffer {
        let b = AudioBuffer(channels: 2, capacity: frames)
        for c in 0..<2 {
            for i in 0..<frames { b.channel(c)[i] = Self.values[(i + offset + c) % Self.values.count] }
        }
        return b
    }

    @Test(arguments: [1, 3, 7, 8, 13, 64, 67])
    func clampPutsEveryValueInRange(frames: Int) {
        let b = filled(frames, offset: frames)
        b.clamp(frames: frames)
        for c in 0..<2 {
            for i in 0..<frames {
                let x = Self.values[(i + frames + c) % Self.values.count]
                let expected: Float = x.isNaN ? 0 : min(max(x, -1), 1)
                #expect(b.channel(c)[i] == expected, "clamp(\(x)) at frame \(i)")
            }
        }
    }

    @Test(arguments: [1, 3, 7, 8, 13, 64, 67])
    func replaceNonFiniteKeepsEveryNumberAndSilencesTheRest(frames: Int) {
        let b = filled(frames, offset: 2 * frames)
        b.replaceNonFinite(frames: frames)
        for c in 0..<2 {
            for i in 0..<frames {
                let x = Self.values[(i + 2 * frames + c) % Self.values.count]
                let y = b.channel(c)[i]
                #expect(x.isFinite ? y.bitPattern == x.bitPattern : y == 0, "replaceNonFinite(\(x)) at frame \(i)")
            }
        }
    }

    /// Only the frames asked for are touched.
    @Test func theFramesBeyondTheBlockAreLeftAlone() {
        let b = AudioBuffer(channels: 1, capacity: 16)
        for i in 0..<16 { b.channel(0)[i] = 5 }
        b.clamp(frames: 9)
        #expect(Array(UnsafeBufferPointer(start: b.channel(0), count: 16)) == [Float](repeating: 1, count: 9) + [Float](repeating: 5, count: 7))
        b.channel(0)[12] = .nan
        b.replaceNonFinite(frames: 12)
        #expect(b.channel(0)[12].isNaN)
    }
}
