import CSampleRate

/// Reads an audio file at another sample rate than its own, converted with libsamplerate's
/// best sinc converter (offline work: quality over speed). At the file's own rate it passes
/// the samples through untouched, bit for bit. Interleaved, with the file's channel count.
public final class ResampledReader {
    public let reader: AudioFileReader
    public let outputRate: Int
    public var channels: Int { reader.channels }
    /// About how many frames it will give: the file's length at the output rate.
    public var expectedFrames: Int { Int((Double(reader.frames) * ratio).rounded()) }
    private let ratio: Double
    private let converter: OpaquePointer?
    private var pending: [Float]
    private var pendingFrames = 0
    private var inputEnded = false
    private var outputEnded = false

    public init(_ reader: AudioFileReader, outputRate: Int) throws(AudioFileError) {
        self.reader = reader
        self.outputRate = outputRate
        ratio = Double(outputRate) / Double(reader.sampleRate)
        pending = [Float](repeating: 0, count: 4096 * reader.channels)
        if outputRate == reader.sampleRate {
            converter = nil
            return
        }
        guard src_is_valid_ratio(ratio) != 0 else {
            throw AudioFileError(path: reader.path, message: "is at \(reader.sampleRate) Hz, too far from \(outputRate) Hz "
                                 + "to convert (libsamplerate converts up to 256 times either way)")
        }
        var error: Int32 = 0
        guard let state = src_new(Int32(SRC_SINC_BEST_QUALITY), Int32(reader.channels), &error) else {
            throw AudioFileError(path: reader.path, message: "cannot convert its rate: "
                                 + String(cString: src_strerror(error)))
        }
        converter = state
    }

    deinit { if let converter { src_delete(converter) } }

    /// Reads up to `frames` interleaved frames into `buffer`; returns how many (fewer only at
    /// the end, 0 after it).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        guard let converter else {
            var done = 0
            while done < frames {
                let n = try reader.read(into: buffer + done * channels, frames: frames - done)
                if n == 0 { break }
                done += n
            }
            return done
        }
        var done = 0
        while done < frames && !outputEnded {
            if pendingFrames == 0 && !inputEnded {
                let capacity = pending.count / channels
                pendingFrames = try pending.withMutableBuffer { p throws(AudioFileError) in
                    try reader.read(into: p.baseAddress!, frames: capacity)
                }
                if pendingFrames == 0 { inputEnded = true }
            }
            var data = SRC_DATA()
            let (used, produced, rc) = pending.withUnsafeBufferPointer { p in
                data.data_in = p.baseAddress
                data.input_frames = pendingFrames
                data.data_out = buffer + done * channels
                data.output_frames = frames - done
                data.src_ratio = ratio
                data.end_of_input = inputEnded ? 1 : 0
                let rc = src_process(converter, &data)
                return (data.input_frames_used, data.output_frames_gen, rc)
            }
            guard rc == 0 else {
                throw AudioFileError(path: reader.path, message: "rate conversion failed: " + String(cString: src_strerror(rc)))
            }
            if used > 0 {
                let left = (pendingFrames - used) * channels
                pending.withUnsafeMutableBufferPointer { p in
                    p.baseAddress!.update(from: p.baseAddress! + used * channels, count: left)
                }
                pendingFrames -= used
            }
            done += produced
            if inputEnded && pendingFrames == 0 && produced == 0 { outputEnded = true }
        }
        return done
    }
}
