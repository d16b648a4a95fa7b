import CALSA
import StageboxEngine
import StageboxSystem

/// One opened and configured ALSA PCM stream, with mmap interleaved access.
final class PCMDevice {
    let name: String
    let stream: snd_pcm_stream_t
    let handle: OpaquePointer
    let channels: Int
    let format: SampleFormat
    /// A kernel PCM (`hw`), not a plugin: its `snd_pcm_htimestamp` reads the same pointers as
    /// its `snd_pcm_avail_update`. A plugin's answers with its slave's avail, and only the
    /// plugin's own avail update moves its pointer (and, capturing, converts the frames).
    let isHardware: Bool

    var streamName: String { stream == SND_PCM_STREAM_CAPTURE ? "capture" : "playback" }

    /// Opens `name` (from `config` if given, else from alsa-lib's global configuration)
    /// and sets it up exactly as `parameters` and `period` (the engine's) ask, or throws naming
    /// what the device cannot do.
    init(name: String, stream: snd_pcm_stream_t, channels: Int, parameters p: ALSAParameters, period: Int,
         config: ALSAConfigText?) throws(ALSAError) {
        self.name = name
        self.stream = stream
        self.channels = channels
        self.format = p.format
        var pcm: OpaquePointer?
        let mode = Int32(SND_PCM_NONBLOCK)
        let rc = config.map { snd_pcm_open_lconf(&pcm, name, stream, mode, $0.tree) }
            ?? snd_pcm_open(&pcm, name, stream, mode)
        let streamText = stream == SND_PCM_STREAM_CAPTURE ? "capture" : "playback"
        guard rc == 0, let pcm else { throw .open(device: name, stream: streamText, code: rc) }
        handle = pcm
        isHardware = snd_pcm_type(pcm) == SND_PCM_TYPE_HW
        // If configuring throws, the object is fully initialised: deinit closes the PCM.
        try configureHardware(p, period: period)
        try configureSoftware(period: period)
        prefaultBuffer(frames: period * p.periods)
    }

    /// Maps the stream's buffer in here, on the thread that opens it: under the appliance's
    /// MCL_ONFAULT a driver whose buffer is mapped page by page (snd-aloop, USB audio) would
    /// otherwise fault on the audio thread's first pass after every open. The PCM is prepared
    /// (hw_params prepares it), so `snd_pcm_mmap_begin` gives the areas; nothing is committed.
    /// Only for a `hw` PCM: a plugin's mmap_begin may move data already (the `file` plugin
    /// reads its input), and a plugin's buffer is its own heap memory, touched when it runs.
    private func prefaultBuffer(frames: Int) {
        guard isHardware else { return }
        var areas: UnsafePointer<snd_pcm_channel_area_t>?
        var offset: snd_pcm_uframes_t = 0
        var count: snd_pcm_uframes_t = 0
        guard snd_pcm_mmap_begin(handle, &areas, &offset, &count) >= 0, let areas else { return }
        for c in 0..<channels {
            let area = areas[c]
            guard let address = area.addr else { continue }
            // From this channel's first sample to the buffer's end (interleaved: the channels'
            // ranges overlap; never past the end, which may be the mapping's).
            let first = Int(area.first) / 8
            Prefault.populate(address + first, bytes: max(0, frames * Int(area.step) / 8 - first))
        }
    }

    deinit { snd_pcm_close(handle) }

    private func unsupported(_ parameter: String, _ asked: String, _ offered: String) -> ALSAError {
        .unsupported(device: name, stream: streamName, parameter: parameter, asked: asked, offered: offered)
    }

    private func configureHardware(_ p: ALSAParameters, period: Int) throws(ALSAError) {
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        guard let hw else { throw .call(device: name, what: "snd_pcm_hw_params_malloc", code: -12) }
        defer { snd_pcm_hw_params_free(hw) }
        var rc = snd_pcm_hw_params_any(handle, hw)
        guard rc >= 0 else { throw .call(device: name, what: "snd_pcm_hw_params_any", code: rc) }

        if snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_MMAP_INTERLEAVED) < 0 {
            throw unsupported("access", "mmap interleaved", "no mmap interleaved access")
        }
        if snd_pcm_hw_params_set_format(handle, hw, p.format.alsaFormat) < 0 {
            let offered = SampleFormat.allCases.filter { snd_pcm_hw_params_test_format(handle, hw, $0.alsaFormat) == 0 }
            throw unsupported("format", p.format.rawValue,
                              offered.isEmpty ? "none of S16_LE, S24_LE, S24_3LE, S32_LE, FLOAT_LE"
                                              : offered.map(\.rawValue).joined(separator: ", "))
        }
        if snd_pcm_hw_params_set_channels(handle, hw, UInt32(channels)) < 0 {
            var lo: UInt32 = 0, hi: UInt32 = 0
            snd_pcm_hw_params_get_channels_min(hw, &lo)
            snd_pcm_hw_params_get_channels_max(hw, &hi)
            throw unsupported("channels", "\(channels)", lo == hi ? "\(lo)" : "\(lo) to \(hi)")
        }
        // No resampling in alsa-lib: the codec runs at the configured rate or we say so.
        snd_pcm_hw_params_set_rate_resample(handle, hw, 0)
        if snd_pcm_hw_params_set_rate(handle, hw, UInt32(p.sampleRate), 0) < 0 {
            var lo: UInt32 = 0, hi: UInt32 = 0, dir: Int32 = 0
            snd_pcm_hw_params_get_rate_min(hw, &lo, &dir)
            snd_pcm_hw_params_get_rate_max(hw, &hi, &dir)
            throw unsupported("rate", "\(p.sampleRate) Hz", lo == hi ? "\(lo) Hz" : "\(lo) to \(hi) Hz")
        }
        if snd_pcm_hw_params_set_period_size(handle, hw, snd_pcm_uframes_t(period), 0) < 0 {
            var lo: snd_pcm_uframes_t = 0, hi: snd_pcm_uframes_t = 0, dir: Int32 = 0
            snd_pcm_hw_params_get_period_size_min(hw, &lo, &dir)
            snd_pcm_hw_params_get_period_size_max(hw, &hi, &dir)
            throw unsupported("period", "\(period) frames", "\(lo) to \(hi) frames")
        }
        if snd_pcm_hw_params_set_periods(handle, hw, UInt32(p.periods), 0) < 0 {
            var lo: UInt32 = 0, hi: UInt32 = 0, dir: Int32 = 0
            snd_pcm_hw_params_get_periods_min(hw, &lo, &dir)
            snd_pcm_hw_params_get_periods_max(hw, &hi, &dir)
            throw unsupported("periods", "\(p.periods)", "\(lo) to \(hi) at \(period) frames per period")
        }
        rc = snd_pcm_hw_params(handle, hw)
        guard rc >= 0 else { throw .call(device: name, what: "snd_pcm_hw_params", code: rc) }
        // The engine's buffers, the bus's rings and deadlines are planned for exactly this
        // period: a device that settled on another one is refused, never run at it.
        var granted: snd_pcm_uframes_t = 0, dir: Int32 = 0
        snd_pcm_hw_params_get_period_size(hw, &granted, &dir)
        guard Int(granted) == period else {
            throw unsupported("period", "\(period) frames", "\(granted) frames granted")
        }
        var buffer: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_buffer_size(hw, &buffer)
        guard Int(buffer) == period * p.periods else {
            throw unsupported("buffer", "\(period * p.periods) frames", "\(buffer) frames")
        }
    }

    private func configureSoftware(period: Int) throws(ALSAError) {
        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        guard let sw else { throw .call(device: name, what: "snd_pcm_sw_params_malloc", code: -12) }
        defer { snd_pcm_sw_params_free(sw) }
        var rc = snd_pcm_sw_params_current(handle, sw)
        guard rc >= 0 else { throw .call(device: name, what: "snd_pcm_sw_params_current", code: rc) }
        var boundary: snd_pcm_uframes_t = 0
        snd_pcm_sw_params_get_boundary(sw, &boundary)
        // Nothing starts on its own: the driver starts both streams together.
        rc = snd_pcm_sw_params_set_start_threshold(handle, sw, boundary)
        guard rc >= 0 else { throw .call(device: name, what: "set start_threshold", code: rc) }
        // One wakeup per period.
        rc = snd_pcm_sw_params_set_avail_min(handle, sw, snd_pcm_uframes_t(period))
        guard rc >= 0 else { throw .call(device: name, what: "set avail_min", code: rc) }
        if stream == SND_PCM_STREAM_PLAYBACK {
            // The kernel zeroes what has been played: after an underrun the codec plays silence,
            // not audio from a buffer ago.
            snd_pcm_sw_params_set_silence_threshold(handle, sw, 0)
            snd_pcm_sw_params_set_silence_size(handle, sw, boundary)
        }
        snd_pcm_sw_params_set_tstamp_mode(handle, sw, SND_PCM_TSTAMP_ENABLE)
        snd_pcm_sw_params_set_tstamp_type(handle, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)
        rc = snd_pcm_sw_params(handle, sw)
        guard rc >= 0 else { throw .call(device: name, what: "snd_pcm_sw_params", code: rc) }
    }

    /// The poll descriptors of this stream.
    var pollDescriptorCount: Int { Int(snd_pcm_poll_descriptors_count(handle)) }

    /// Fills `fds` with this stream's poll descriptors.
    func fillPollDescriptors(_ fds: UnsafeMutablePointer<pollfd>, count: Int) {
        snd_pcm_poll_descriptors(handle, fds, UInt32(count))
    }

    /// Moves `frames` frames between the mmap areas and `buffer`'s channels, starting at
    /// `offset` frames in the buffer. Capture decodes out of the areas, playback encodes into them.
    /// Returns the frames moved, or a negative error code (the caller recovers).
    @inline(__always)
    func transfer(_ buffer: AudioBuffer, frames: Int) -> Int {
        var done = 0
        while done < frames {
            var areas: UnsafePointer<snd_pcm_channel_area_t>?
            var offset: snd_pcm_uframes_t = 0
            var count = snd_pcm_uframes_t(frames - done)
            let rc = snd_pcm_mmap_begin(handle, &areas, &offset, &count)
            if rc < 0 { return Int(rc) }
            guard let areas, count > 0 else { return done }
            let n = Int(count)
            if let base = Self.interleavedStereoBase(areas, channels: channels, format: format, offset: offset) {
                if stream == SND_PCM_STREAM_CAPTURE {
                    format.decodeStereo(base, into: buffer.channel(0) + done, buffer.channel(1) + done, frames: n)
                } else {
                    format.encodeStereo(buffer.channel(0) + done, buffer.channel(1) + done, frames: n, into: base)
                }
            } else {
                for c in 0..<channels {
                    let area = areas[c]
                    let stride = Int(area.step) / 8
                    let base = area.addr! + (Int(area.first) / 8 + Int(offset) * stride)
                    if stream == SND_PCM_STREAM_CAPTURE {
                        format.decode(base, stride: stride, into: buffer.channel(c) + done, frames: n)
                    } else {
                        format.encode(buffer.channel(c) + done, frames: n, into: base, stride: stride)
                    }
                }
            }
            let committed = snd_pcm_mmap_commit(handle, offset, count)
            if committed < 0 { return Int(committed) }
            // A short commit means the stream ran over or under while we worked.
            if committed != Int(count) { return -Int(EPIPE) }
            done += n
        }
        return done
    }

    /// Where the frames at `offset` start when the areas are two channels interleaved in one
    /// buffer (left, right, left, ...): the layout of nearly every codec, which one pass over
    /// both channels converts (`SampleFormat.decodeStereo`). Nil for any other layout.
    @inline(__always)
    static func interleavedStereoBase(_ areas: UnsafePointer<snd_pcm_channel_area_t>, channels: Int,
                                      format: SampleFormat, offset: snd_pcm_uframes_t) -> UnsafeMutableRawPointer? {
        guard channels == 2, let addr = areas[0].addr, areas[1].addr == addr else { return nil }
        let bits = UInt32(format.bytesPerSample * 8)
        let left = areas[0], right = areas[1]
        // Wrapping arithmetic: these are the device's values, and the audio thread must not trap.
        guard left.step == 2 &* bits, right.step == 2 &* bits, left.first % 8 == 0,
              right.first >= left.first, right.first &- left.first == bits else { return nil }
        let base = addr + Int(left.first / 8) + Int(offset) * Int(left.step / 8)
        // The typed loads need the format's alignment; a sample of an odd size has none to need.
        guard format == .s24Packed || Int(bitPattern: base) % format.bytesPerSample == 0 else { return nil }
        return base
    }

    /// Writes `frames` frames of silence (the pre-fill before start).
    func writeSilence(frames: Int) -> Int {
        var done = 0
        while done < frames {
            var areas: UnsafePointer<snd_pcm_channel_area_t>?
            var offset: snd_pcm_uframes_t = 0
            var count = snd_pcm_uframes_t(frames - done)
            let rc = snd_pcm_mmap_begin(handle, &areas, &offset, &count)
            if rc < 0 { return Int(rc) }
            guard count > 0 else { return done }
            snd_pcm_areas_silence(areas, offset, UInt32(channels), count, format.alsaFormat)
            let committed = snd_pcm_mmap_commit(handle, offset, count)
            if committed < 0 { return Int(committed) }
            done += Int(committed)
        }
        return done
    }
}

extension SampleFormat {
    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .s16: return SND_PCM_FORMAT_S16_LE
        case .s24: return SND_PCM_FORMAT_S24_LE
        case .s24Packed: return SND_PCM_FORMAT_S24_3LE
        case .s32: return SND_PCM_FORMAT_S32_LE
        case .float: return SND_PCM_FORMAT_FLOAT_LE
        }
    }
}
