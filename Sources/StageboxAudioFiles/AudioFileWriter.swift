import CSndFile

/// Writes a WAV file from interleaved Float32.
public final class AudioFileWriter {
    public let path: String
    public let channels: Int
    public let encoding: AudioFileEncoding
    private var file: OpaquePointer?
    private var scratch: [Int32] = []

    public init(path: String, sampleRate: Int, channels: Int, encoding: AudioFileEncoding) throws(AudioFileError) {
        self.path = path
        self.channels = channels
        self.encoding = encoding
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = Int32(SF_FORMAT_WAV) | encoding.subtype
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError(path: path, message: "cannot write \(channels) channels at \(sampleRate) Hz "
                                 + "as \(encoding.rawValue) WAV")
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(path: path, message: String(cString: sf_strerror(nil)))
        }
        // Float files keep the values as they are; integer ones are scaled by Stagebox.
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        self.file = file
    }

    deinit { try? close() }

    /// Appends `frames` interleaved frames.
    public func write(_ buffer: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
        guard let file else { throw AudioFileError(path: path, message: "already closed") }
        let written: Int
        if encoding == .float32 {
            written = Int(sf_writef_float(file, buffer, sf_count_t(frames)))
        } else {
            let samples = frames * channels
            if scratch.count < samples { scratch = [Int32](repeating: 0, count: samples) }
            for i in 0..<samples { scratch[i] = SampleScaling.toInt(buffer[i]) }
            written = scratch.withUnsafeBufferPointer { Int(sf_writef_int(file, $0.baseAddress, sf_count_t(frames))) }
        }
        if written != frames {
            throw AudioFileError(path: path, message: "write failed: " + String(cString: sf_strerror(file)))
        }
    }

    /// Appends interleaved samples from an array.
    public func write(_ samples: [Float]) throws(AudioFileError) {
        try samples.withBuffer { p throws(AudioFileError) in
            try write(p.baseAddress!, frames: samples.count / channels)
        }
    }

    /// Finishes the header and closes the file.
    public func close() throws(AudioFileError) {
        guard let f = file else { return }
        file = nil
        if sf_close(f) != 0 {
            throw AudioFileError(path: path, message: "close failed")
        }
    }
}
