import Testing
@testable import StageboxRealtime

@Suite struct SampleRingTests {
    /// Frames go in per channel or interleaved and come out the same way, across the wrap.
    @Test func framesComeOutAsTheyWentInAcrossTheWrap() {
        let ring = SampleRing(channels: 2, capacityFrames: 10)
        var left = [Float](repeating: 0, count: 6), right = [Float](repeating: 0, count: 6)
        var next: Float = 0
        for _ in 0..<20 {
            for i in 0..<6 { left[i] = next; right[i] = -next; next += 1 }
            let wrote = left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in ring.write(frames: 6) { $0 == 0 ? l.baseAddress! : r.baseAddress! } }
            }
            #expect(wrote)
            var out = [Float](repeating: 0, count: 12)
            #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, maxFrames: 6) } == 6)
            #expect(out == (0..<6).flatMap { [left[$0], right[$0]] })
        }
        let interleaved: [Float] = [1, -1, 2, -2, 3, -3]
        #expect(interleaved.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frames: 3) })
        var a = [Float](repeating: 0, count: 3), b = [Float](repeating: 0, count: 3)
        let n = a.withUnsafeMutableBufferPointer { pa in
            b.withUnsafeMutableBufferPointer { pb in ring.read(maxFrames: 8) { $0 == 0 ? pa.baseAddress! : pb.baseAddress! } }
        }
        #expect(n == 3 && a == [1, 2, 3] && b == [-1, -2, -3])
    }

    /// A write that does not fit is refused whole: the reader never sees part of a period.
    @Test func aWriteThatDoesNotFitIsRefusedWhole() {
        let ring = SampleRing(channels: 1, capacityFrames: 8)
        let five: [Float] = [1, 2, 3, 4, 5]
        #expect(five.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frames: 5) })
        #expect(!five.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frames: 5) })
        #expect(ring.availableFrames == 5 && ring.freeFrames == 3)
        var out = [Float](repeating: 0, count: 8)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, maxFrames: 8) } == 5)
        #expect(Array(out.prefix(5)) == five)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, maxFrames: 8) } == 0)
    }
}
