import StageboxAudioFiles

/// What a take's samples are: rate, channels and encoding, and the bytes that makes.
public struct TakeFormat: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    public var encoding: AudioFileEncoding

    public init(sampleRate: Int, channels: Int, encoding: AudioFileEncoding) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
    }

    public var bytesPerSample: Int {
        switch encoding {
        case .pcm16: 2
        case .pcm24: 3
        case .pcm32, .float32: 4
        }
    }

    public var bytesPerFrame: Int { bytesPerSample * channels }

    /// WAVE_FORMAT_PCM or WAVE_FORMAT_IEEE_FLOAT; more than two channels use EXTENSIBLE.
    var formatTag: UInt16 { encoding == .float32 ? 3 : 1 }
    /// Above two channels PCM is EXTENSIBLE; float stays WAVE_FORMAT_IEEE_FLOAT (sox reads it so).
    var extensible: Bool { channels > 2 && encoding != .float32 }

    /// Converts interleaved floats into the file's little-endian samples (integers clip at
    /// full scale and round to nearest; NaN becomes silence).
    func encode(_ samples: UnsafePointer<Float>, count: Int, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(count * bytesPerSample)
        for i in 0..<count {
            let x = samples[i].isNaN ? 0 : samples[i]
            switch encoding {
            case .float32:
                let bits = x.bitPattern
                for b in 0..<4 { out.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt32(b)))) }
            case .pcm16:
                let v = Int32((min(max(x, -1), 1) * 32768).rounded(.toNearestOrEven).clamped(-32768, 32767))
                out.append(UInt8(truncatingIfNeeded: v)); out.append(UInt8(truncatingIfNeeded: v >> 8))
            case .pcm24, .pcm32:
                let v = Int32((min(max(x, -1), 1) * 8_388_608).rounded(.toNearestOrEven).clamped(-8_388_608, 8_388_607))
                if encoding == .pcm32 { out.append(0) } // 24 significant bits, as the codec gives
                out.append(UInt8(truncatingIfNeeded: v)); out.append(UInt8(truncatingIfNeeded: v >> 8))
                out.append(UInt8(truncatingIfNeeded: v >> 16))
            }
        }
    }
}

extension Float {
    fileprivate func clamped(_ low: Float, _ high: Float) -> Float { Swift.min(Swift.max(self, low), high) }
}
