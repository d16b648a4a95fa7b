import CSndFile

/// The sample encodings Stagebox writes in WAV files (it reads everything libsndfile reads).
public enum AudioFileEncoding: String, Sendable, CaseIterable {
    case pcm16 = "PCM_16"
    case pcm24 = "PCM_24"
    case pcm32 = "PCM_32"
    case float32 = "FLOAT"

    init?(subtype: Int32) {
        switch subtype {
        case Int32(SF_FORMAT_PCM_16): self = .pcm16
        case Int32(SF_FORMAT_PCM_24): self = .pcm24
        case Int32(SF_FORMAT_PCM_32): self = .pcm32
        case Int32(SF_FORMAT_FLOAT): self = .float32
        default: return nil
        }
    }

    /// The encoding that holds every sample of a libsndfile subtype no WAV case matches.
    static func nearest(to subtype: Int32) -> AudioFileEncoding {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW),
             Int32(SF_FORMAT_IMA_ADPCM), Int32(SF_FORMAT_MS_ADPCM), Int32(SF_FORMAT_GSM610),
             Int32(SF_FORMAT_DPCM_8), Int32(SF_FORMAT_DPCM_16), Int32(SF_FORMAT_DWVW_12), Int32(SF_FORMAT_DWVW_16),
             Int32(SF_FORMAT_ALAC_16):
            return .pcm16
        case Int32(SF_FORMAT_DWVW_24), Int32(SF_FORMAT_ALAC_20), Int32(SF_FORMAT_ALAC_24):
            return .pcm24
        case Int32(SF_FORMAT_ALAC_32):
            return .pcm32
        default:
            return .float32 // double, Vorbis, Opus, MPEG: reals
        }
    }

    var subtype: Int32 {
        switch self {
        case .pcm16: return Int32(SF_FORMAT_PCM_16)
        case .pcm24: return Int32(SF_FORMAT_PCM_24)
        case .pcm32: return Int32(SF_FORMAT_PCM_32)
        case .float32: return Int32(SF_FORMAT_FLOAT)
        }
    }

    public var bitsPerSample: Int {
        switch self {
        case .pcm16: return 16
        case .pcm24: return 24
        case .pcm32, .float32: return 32
        }
    }
}

/// Integer samples are moved as left-justified Int32 and scaled by Stagebox itself, the same
/// way the codec formats are: libsndfile's own float scaling is not symmetric (it reads 16-bit
/// with 1/32768 but writes with 32767) and would not give bit-exact round trips.
enum SampleScaling {
    @inline(__always)
    static func toFloat(_ v: Int32) -> Float { Float(v >> 8) * (1 / 8_388_608) }

    @inline(__always)
    static func toInt(_ x: Float) -> Int32 {
        guard !x.isNaN else { return 0 }
        let y = (min(max(x, -1), 1) * 8_388_608).rounded(.toNearestOrEven)
        return Int32(min(max(y, -8_388_608), 8_388_607)) << 8
    }
}
