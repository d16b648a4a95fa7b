import CALSA
import Testing
@testable import StageboxDrivers

@Suite struct SampleFormatTests {
    /// Encodes `values` from Float32 and decodes them back, through `format`'s memory layout.
    private func roundTrip(_ format: SampleFormat, _ values: [Float]) -> (bytes: [UInt8], back: [Float]) {
        var bytes = [UInt8](repeating: 0xAA, count: values.count * format.bytesPerSample)
        values.withUnsafeBufferPointer { src in
            bytes.withUnsafeMutableBytes { format.encode(src.baseAddress!, frames: values.count, into: $0.baseAddress!,
                                                         stride: format.bytesPerSample) }
        }
        var back = [Float](repeating: 0, count: values.count)
        bytes.withUnsafeBytes { raw in
            back.withUnsafeMutableBufferPointer { format.decode(raw.baseAddress!, stride: format.bytesPerSample,
                                                                into: $0.baseAddress!, frames: values.count) }
        }
        return (bytes, back)
    }

    @Test func s16IsBitExactBothWays() {
        // Every 16-bit value: bytes → Float32 → bytes gives the same bytes.
        var bytes = [UInt8]()
        for v in Int16.min...Int16.max { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        let n = bytes.count / 2
        var floats = [Float](repeating: 0, count: n)
        bytes.withUnsafeBytes { raw in
            floats.withUnsafeMutableBufferPointer { SampleFormat.s16.decode(raw.baseAddress!, stride: 2, into: $0.baseAddress!, frames: n) }
        }
        #expect(floats.first == -1)
        #expect(roundTrip(.s16, floats).bytes == bytes)
    }

    @Test(arguments: [SampleFormat.s24, .s24Packed])
    func s24IsBitExactBothWays(format: SampleFormat) {
        // A spread of 24-bit values including both ends and zero.
        var values: [Int32] = [-8_388_608, -1, 0, 1, 8_388_607]
        var x: UInt32 = 12345
        for _ in 0..<100_000 { x = x &* 1_664_525 &+ 1_013_904_223; values.append(Int32(bitPattern: x) >> 8) }
        let floats = values.map { Float($0) / 8_388_608 }
        let (bytes, back) = roundTrip(format, floats)
        #expect(back == floats)
        // The integer read back from memory is the one we started from.
        for (i, v) in values.enumerated().prefix(1000) {
            let b = bytes[(i * format.bytesPerSample)..<(i * format.bytesPerSample + 3)]
            let raw = Int32(b[b.startIndex]) | Int32(b[b.startIndex + 1]) << 8 | Int32(b[b.startIndex + 2]) << 16
            #expect((raw << 8) >> 8 == v)
        }
    }

    @Test func s32KeepsTopTwentyFourBits() {
        var x: UInt32 = 99
        for _ in 0..<100_000 {
            x = x &* 1_664_525 &+ 1_013_904_223
            let v = Int32(bitPattern: x)
            var f: Float = 0
            withUnsafeBytes(of: v.littleEndian) { raw in SampleFormat.s32.decode(raw.baseAddress!, stride: 4, into: &f, frames: 1) }
            var out = Int32(0)
            withUnsafeMutableBytes(of: &out) { SampleFormat.s32.encode([f], frames: 1, into: $0.baseAddress!, stride: 4) }
            #expect(out >> 8 == v >> 8)
            #expect(out & 0xFF == 0)
        }
    }

    @Test func floatPassesThroughAndClamps() {
        let (_, back) = roundTrip(.float, [0, 0.25, -0.5, 1, -1, 2, -3, .nan, .infinity])
        #expect(back == [0, 0.25, -0.5, 1, -1, 1, -1, 0, 1])
    }

    @Test(arguments: [SampleFormat.s16, .s24, .s24Packed, .s32])
    func integerFormatsClampOutOfRange(format: SampleFormat) {
        let (_, back) = roundTrip(format, [1.5, -1.5, .nan, -.infinity])
        let top = format == .s16 ? Float(32767) / 32768 : Float(8_388_607) / 8_388_608
        #expect(back == [top, -1, 0, -1])
    }

    /// Between two steps a value goes to the nearer one, and a tie to the even one, in every
    /// integer format (what the rounding trick must give, as rintf did).
    @Test(arguments: [SampleFormat.s16, .s24, .s24Packed, .s32])
    func valuesBetweenStepsRoundToNearestTiesToEven(format: SampleFormat) {
        let step: Float = format == .s16 ? 1 / 32768 : 1 / 8_388_608
        let steps: [Float] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 0.51, -0.51, 1000.25, -1000.75]
        let (_, back) = roundTrip(format, steps.map { $0 * step })
        let expected: [Float] = [0, 2, 2, 0, -2, -2, 0, 1, -1, 1000, -1001]
        #expect(back == expected.map { $0 * step })
    }

    /// The 16-bit conversion, made in Float alone, against the plain rule (clamp, scale, round
    /// to nearest with ties to even, saturate) at every step of the scale, a quarter and a half
    /// step either side of it, and at random values over and within range.
    @Test func sixteenBitsRoundAsThePlainRuleAtEveryStep() {
        func plain(_ x: Float) -> Int16 {
            let c = x.isNaN ? 0 : Swift.min(Swift.max(x, -1), 1)
            return Int16(Swift.min((c * 32768).rounded(.toNearestOrEven), 32767))
        }
        var values: [Float] = []
        for k in -32770...32770 {
            for offset: Float in [-0.5, -0.25, 0, 0.25, 0.5] { values.append((Float(k) + offset) / 32768) }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100_000 { values.append(Float.random(in: -1.2...1.2, using: &rng)) }
        let wrong = values.filter { SampleFormat.toS16($0) != plain($0) }
        let wrongCount = wrong.count
        #expect(wrongCount == 0, "first: \(wrong.prefix(5).map { "\($0) -> \(SampleFormat.toS16($0)), not \(plain($0))" })")
    }

    @Test func decodesWithAStride() {
        // Interleaved stereo S16: take the right channel only.
        let frames: [Int16] = [1, -1, 2, -2, 3, -3]
        var out = [Float](repeating: 0, count: 3)
        frames.withUnsafeBytes { raw in
            SampleFormat.s16.decode(raw.baseAddress! + 2, stride: 4, into: &out, frames: 3)
        }
        #expect(out == [-1, -2, -3].map { Float($0) / 32768 })
    }

    /// Values of every kind a stereo pass meets: in range, between steps, over range, NaN,
    /// infinities, the extremes; left and right differ so that a swap shows.
    private static let awkward: [Float] = [0, 0.5, -0.25, 1, -1, 2, -3, .nan, .infinity, -.infinity,
                                           .greatestFiniteMagnitude, 1.5 / 32768, 2.5 / 8_388_608,
                                           -0.999, 0.3333, 1e-9, -1e-9, 0.75, -0.75, 0.1]

    @Test(arguments: SampleFormat.allCases)
    func theStereoPassesMatchTheChannelByChannelPasses(format: SampleFormat) {
        // 19 frames: an odd count, so a vector loop's remainder runs too.
        let left = Self.awkward.dropLast(), right = Self.awkward.dropFirst().reversed()
        let frames = left.count, size = format.bytesPerSample
        var byChannel = [UInt8](repeating: 0xAA, count: 2 * frames * size), byPass = byChannel
        Array(left).withUnsafeBufferPointer { l in
            Array(right).withUnsafeBufferPointer { r in
                byChannel.withUnsafeMutableBytes {
                    format.encode(l.baseAddress!, frames: frames, into: $0.baseAddress!, stride: 2 * size)
                    format.encode(r.baseAddress!, frames: frames, into: $0.baseAddress! + size, stride: 2 * size)
                }
                byPass.withUnsafeMutableBytes {
                    format.encodeStereo(l.baseAddress!, r.baseAddress!, frames: frames, into: $0.baseAddress!)
                }
            }
        }
        #expect(byPass == byChannel)
        let (left1, right1) = expectStereoDecodeMatches(format, byChannel, frames: frames)
        #expect(left1 != right1)
    }

    /// Decodes `bytes` channel by channel and in one pass; expects the same bits both ways.
    /// Returns the channels.
    @discardableResult
    private func expectStereoDecodeMatches(_ format: SampleFormat, _ bytes: [UInt8], frames: Int) -> ([Float], [Float]) {
        let size = format.bytesPerSample
        var l1 = [Float](repeating: 9, count: frames), r1 = l1, l2 = l1, r2 = l1
        bytes.withUnsafeBytes { raw in
            format.decode(raw.baseAddress!, stride: 2 * size, into: &l1, frames: frames)
            format.decode(raw.baseAddress! + size, stride: 2 * size, into: &r1, frames: frames)
            format.decodeStereo(raw.baseAddress!, into: &l2, &r2, frames: frames)
        }
        #expect(l1.map(\.bitPattern) == l2.map(\.bitPattern), "left")
        #expect(r1.map(\.bitPattern) == r2.map(\.bitPattern), "right")
        return (l1, r1)
    }

    @Test(arguments: SampleFormat.allCases)
    func theStereoDecodeMatchesOnAnyBytes(format: SampleFormat) {
        // Bytes no encoder writes: S24_LE's top byte set, S32's low byte set, float NaNs.
        let frames = 37
        var x: UInt32 = 11
        let bytes = (0..<(2 * frames * format.bytesPerSample)).map { _ -> UInt8 in
            x = x &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: x >> 24)
        }
        expectStereoDecodeMatches(format, bytes, frames: frames)
    }

    @Test func onlyTwoChannelsInterleavedInOneBufferTakeTheStereoPass() {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        func areas(_ a: snd_pcm_channel_area_t, _ b: snd_pcm_channel_area_t, channels: Int = 2,
                   format: SampleFormat = .s32) -> UnsafeMutableRawPointer? {
            withUnsafeTemporaryAllocation(of: snd_pcm_channel_area_t.self, capacity: 2) { p in
                p[0] = a
                p[1] = b
                return PCMDevice.interleavedStereoBase(UnsafePointer(p.baseAddress!), channels: channels, format: format,
                                                       offset: 3)
            }
        }
        let l = snd_pcm_channel_area_t(addr: buffer, first: 0, step: 64)
        let r = snd_pcm_channel_area_t(addr: buffer, first: 32, step: 64)
        #expect(areas(l, r) == buffer + 24)
        // Frames that start past the buffer's start; S16 and packed 24-bit.
        #expect(areas(snd_pcm_channel_area_t(addr: buffer, first: 64, step: 64),
                      snd_pcm_channel_area_t(addr: buffer, first: 96, step: 64)) == buffer + 8 + 24)
        #expect(areas(snd_pcm_channel_area_t(addr: buffer, first: 0, step: 32),
                      snd_pcm_channel_area_t(addr: buffer, first: 16, step: 32), format: .s16) == buffer + 12)
        #expect(areas(snd_pcm_channel_area_t(addr: buffer + 1, first: 0, step: 48),
                      snd_pcm_channel_area_t(addr: buffer + 1, first: 24, step: 48), format: .s24Packed) == buffer + 1 + 18)
        // One channel, or three; right before left; right in another buffer at the same place;
        // only the right's step wrong; a first that would overflow; a first off a byte: the per-channel passes.
        #expect(areas(l, r, channels: 1) == nil)
        #expect(areas(l, r, channels: 3) == nil)
        #expect(areas(r, l) == nil)
        #expect(areas(l, snd_pcm_channel_area_t(addr: buffer + 2048, first: 32, step: 64)) == nil)
        #expect(areas(l, snd_pcm_channel_area_t(addr: buffer, first: 32, step: 96)) == nil)
        #expect(areas(snd_pcm_channel_area_t(addr: buffer, first: .max - 7, step: 64),
                      snd_pcm_channel_area_t(addr: buffer, first: 16, step: 64)) == nil)
        #expect(areas(l, snd_pcm_channel_area_t(addr: buffer + 2048, first: 0, step: 32)) == nil)
        #expect(areas(snd_pcm_channel_area_t(addr: buffer, first: 0, step: 96),
                      snd_pcm_channel_area_t(addr: buffer, first: 32, step: 96)) == nil)
        #expect(areas(snd_pcm_channel_area_t(addr: buffer, first: 4, step: 64),
                      snd_pcm_channel_area_t(addr: buffer, first: 36, step: 64)) == nil)
        // A buffer off the format's alignment.
        #expect(areas(snd_pcm_channel_area_t(addr: buffer + 2, first: 0, step: 64),
                      snd_pcm_channel_area_t(addr: buffer + 2, first: 32, step: 64)) == nil)
    }
}
