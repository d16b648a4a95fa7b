import StageboxAudioFiles
import StageboxEngine

/// Runs the engine over a WAV file as fast as the machine allows: the codec inputs read from
/// `input`, the codec outputs written to `output`, period by period, on a synthetic clock.
/// Deterministic: the same files and configuration give the same output, bit for bit.
public enum OfflineDriver {
    /// Renders `inputPath` into `outputPath`; returns the frames rendered.
    /// The output has the input's length, rate and sample encoding, and the engine's output channels.
    @discardableResult
    public static func render(engine: Engine, period: Int, inputPath: String, outputPath: String,
                              control: DriverControl? = nil) throws(AudioFileError) -> Int {
        let reader = try AudioFileReader(path: inputPath)
        let settings = engine.settings
        guard reader.channels == settings.inputs else {
            throw AudioFileError(path: inputPath, message: "has \(reader.channels) channels; "
                                 + "the configuration's [audio] inputs is \(settings.inputs)")
        }
        guard reader.sampleRate == settings.sampleRate else {
            throw AudioFileError(path: inputPath, message: "is at \(reader.sampleRate) Hz; "
                                 + "the configuration's [audio] rate is \(settings.sampleRate)")
        }
        let writer = try AudioFileWriter(path: outputPath, sampleRate: settings.sampleRate,
                                         channels: settings.outputs, encoding: reader.encoding)
        var inBlock = [Float](repeating: 0, count: period * settings.inputs)
        var outBlock = [Float](repeating: 0, count: period * settings.outputs)
        var position = 0
        while position < reader.frames {
            let want = min(period, reader.frames - position)
            let got = try inBlock.withUnsafeMutableBufferPointer { p throws(AudioFileError) in
                try reader.read(into: p.baseAddress!, frames: want)
            }
            guard got == want else {
                throw AudioFileError(path: inputPath, message: "truncated: the header says \(reader.frames) frames, "
                                     + "the file ends after \(position + got)")
            }
            deinterleave(inBlock, frames: got, into: engine.captureBuffer, padTo: period)
            // A last, short block runs as a whole period padded with silence; only its real
            // frames are written, so the output has the input's length.
            let cycle = CycleInfo(framePosition: Int64(position),
                                  hostTimeNanos: Int64(position) * 1_000_000_000 / Int64(settings.sampleRate),
                                  sampleRate: settings.sampleRate)
            engine.process(frames: period, cycle: cycle)
            interleave(engine.playbackBuffer, frames: got, into: &outBlock)
            try outBlock.withUnsafeBufferPointer { p throws(AudioFileError) in
                try writer.write(p.baseAddress!, frames: got)
            }
            position += got
            control?.framesProcessed.add(got, ordering: .relaxed)
        }
        try writer.close()
        return position
    }

    private static func deinterleave(_ block: [Float], frames: Int, into buffer: AudioBuffer, padTo period: Int) {
        let n = buffer.channels
        for c in 0..<n {
            let dst = buffer.channel(c)
            for i in 0..<frames { dst[i] = block[i * n + c] }
            for i in frames..<period { dst[i] = 0 }
        }
    }

    private static func interleave(_ buffer: AudioBuffer, frames: Int, into block: inout [Float]) {
        let n = buffer.channels
        for c in 0..<n {
            let src = buffer.channel(c)
            for i in 0..<frames { block[i * n + c] = src[i] }
        }
    }
}
