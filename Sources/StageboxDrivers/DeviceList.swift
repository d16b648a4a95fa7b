import CALSA

/// What one PCM that alsa-lib knows can do, for `stagebox devices`.
public struct PCMDeviceInfo: Sendable {
    public var name: String
    public var description: String
    /// `capture`, `playback`, or both.
    public var streams: [StreamCapabilities]

    public struct StreamCapabilities: Sendable {
        public var stream: String
        /// nil when the stream could not be opened; `error` says why.
        public var formats: [SampleFormat]?
        public var channels: ClosedRange<Int>?
        public var rates: ClosedRange<Int>?
        public var periods: ClosedRange<Int>?
        public var error: String?
    }
}

/// Lists the PCMs in alsa-lib's configuration and probes what each supports.
public enum DeviceList {
    public static func pcms() -> [PCMDeviceInfo] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var result: [PCMDeviceInfo] = []
        var i = 0
        while let hint = hints[i] {
            i += 1
            let name = take(snd_device_name_get_hint(hint, "NAME")) ?? "?"
            let desc = (take(snd_device_name_get_hint(hint, "DESC")) ?? "").split(separator: "\n").joined(separator: ", ")
            let ioid = take(snd_device_name_get_hint(hint, "IOID"))
            var streams: [PCMDeviceInfo.StreamCapabilities] = []
            if ioid == nil || ioid == "Input" { streams.append(probe(name, SND_PCM_STREAM_CAPTURE)) }
            if ioid == nil || ioid == "Output" { streams.append(probe(name, SND_PCM_STREAM_PLAYBACK)) }
            result.append(PCMDeviceInfo(name: name, description: desc, streams: streams))
        }
        return result
    }

    private static func take(_ p: UnsafeMutablePointer<CChar>?) -> String? {
        guard let p else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// Opens `name` briefly and reads its hardware parameter ranges.
    public static func probe(_ name: String, _ stream: snd_pcm_stream_t) -> PCMDeviceInfo.StreamCapabilities {
        let label = stream == SND_PCM_STREAM_CAPTURE ? "capture" : "playback"
        var caps = PCMDeviceInfo.StreamCapabilities(stream: label)
        var pcm: OpaquePointer?
        let rc = snd_pcm_open(&pcm, name, stream, Int32(SND_PCM_NONBLOCK))
        guard rc == 0, let pcm else {
            caps.error = ALSAError.text(rc)
            return caps
        }
        defer { snd_pcm_close(pcm) }
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        guard let hw else { return caps }
        defer { snd_pcm_hw_params_free(hw) }
        guard snd_pcm_hw_params_any(pcm, hw) >= 0 else { caps.error = "no hardware parameters"; return caps }
        caps.formats = SampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, hw, $0.alsaFormat) == 0 }
        var lo: UInt32 = 0, hi: UInt32 = 0, dir: Int32 = 0
        if snd_pcm_hw_params_get_channels_min(hw, &lo) == 0, snd_pcm_hw_params_get_channels_max(hw, &hi) == 0 {
            caps.channels = Int(lo)...Int(max(lo, hi))
        }
        if snd_pcm_hw_params_get_rate_min(hw, &lo, &dir) == 0, snd_pcm_hw_params_get_rate_max(hw, &hi, &dir) == 0 {
            caps.rates = Int(lo)...Int(max(lo, hi))
        }
        var plo: snd_pcm_uframes_t = 0, phi: snd_pcm_uframes_t = 0
        if snd_pcm_hw_params_get_period_size_min(hw, &plo, &dir) == 0,
           snd_pcm_hw_params_get_period_size_max(hw, &phi, &dir) == 0 {
            caps.periods = Int(plo)...Int(max(plo, min(phi, 1 << 30)))
        }
        if snd_pcm_hw_params_test_access(pcm, hw, SND_PCM_ACCESS_MMAP_INTERLEAVED) != 0 {
            caps.error = "no mmap interleaved access (Stagebox needs it)"
        }
        return caps
    }
}
