import Foundation
import StageboxEngine
@testable import StageboxDrivers

/// User-space ALSA PCMs (`file` over `null`) defined in a private configuration tree,
/// with the raw files they read and write in a fresh temporary folder.
struct ALSATestRig {
    let folder: URL
    let input: URL
    let output: URL
    let config: ALSAConfigText

    /// `inputBytes` is what the capture PCM delivers.
    init(inputBytes: [UInt8]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        input = folder.appendingPathComponent("in.raw")
        output = folder.appendingPathComponent("out.raw")
        try Data(inputBytes).write(to: input)
        config = try ALSAConfigText("""
            pcm.cap { type file slave.pcm { type null } file "/dev/null" infile "\(input.path)" format raw }
            pcm.play { type file slave.pcm { type null } file "\(output.path)" format raw }
            pcm.nullpcm { type null }
            """)
    }

    func outputBytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: output)) }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    static func parameters(format: SampleFormat, periods: Int = 2, channels: Int = 2,
                           capture: String = "cap", playback: String = "play") -> ALSAParameters {
        ALSAParameters(captureDevice: capture, playbackDevice: playback, format: format, sampleRate: 48000,
                       inputs: channels, outputs: channels, periods: periods, realtimePriority: 0)
    }

    /// Deterministic noise that uses every bit the format carries (S32: the top 24 bits).
    static func stimulus(format: SampleFormat, frames: Int, channels: Int) -> [UInt8] {
        var x: UInt32 = 0xC0FF_EE11
        var bytes = [UInt8]()
        bytes.reserveCapacity(frames * channels * format.bytesPerSample)
        for _ in 0..<(frames * channels) {
            x = x &* 1_664_525 &+ 1_013_904_223
            switch format {
            case .s16: withUnsafeBytes(of: UInt16(truncatingIfNeeded: x >> 16).littleEndian) { bytes += $0 }
            case .s24Packed: withUnsafeBytes(of: (x >> 8).littleEndian) { bytes += $0.prefix(3) }
            case .s24: withUnsafeBytes(of: (UInt32(bitPattern: Int32(bitPattern: x) >> 8)).littleEndian) { bytes += $0 }
            case .s32: withUnsafeBytes(of: (x & 0xFFFF_FF00).littleEndian) { bytes += $0 }
            case .float: withUnsafeBytes(of: (Float(Int32(bitPattern: x) >> 8) / 8_388_608).bitPattern.littleEndian) { bytes += $0 }
            }
        }
        return bytes
    }
}

extension Engine {
    /// A 2-in/2-out engine with `codec.in` connected to `codec.out`.
    static func passthrough(period: Int, channels: Int = 2) throws -> Engine {
        let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: period,
                                                     inputs: channels, outputs: channels))
        try engine.connect(from: "codec.in", to: "codec.out")
        return engine
    }
}
