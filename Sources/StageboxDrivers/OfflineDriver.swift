import StageboxAudioFiles
import StageboxEngine
import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the engine over an audio file as fast as the machine allows: the codec inputs read
/// from `inputPath`, the codec outputs written to `outputPath`, period by period, on a
/// synthetic clock. Deterministic: the same files and configuration give the same output,
/// bit for bit.
///
/// The input may be anything libsndfile reads, at any rate (converted to the engine's with
/// libsamplerate) and with the channels the engine's channel mapping takes (equal, mono to
/// all, all to mono). The output is a WAV at the engine's rate with the engine's output
/// channels, in the input's encoding. It is written to a temporary file beside the output
/// and renamed over it only when the whole input has been rendered: an interrupted or failed
/// render leaves the output as it was, and an output that is the input is refused.
///
/// `@unchecked Sendable`: `open`, `run` and `finish` run one after the other (the supervisor
/// joins the thread that runs `run` before it calls `finish`).
public final class OfflineDriver: AudioDriver, @unchecked Sendable {
    public let engine: Engine
    public let control: DriverControl
    public let inputPath: String
    public let outputPath: String
    public var name: String { "offline: \(inputPath) → \(outputPath)" }
    public var realtimePriority: Int { 0 }
    public var paced: Bool { false }
    /// Frames rendered so far.
    public private(set) var framesRendered = 0

    private var source: ResampledReader?
    private var writer: AudioFileWriter?
    private var temporaryPath: String?
    private var fileBuffer: AudioBuffer?
    private var mapping: ChannelMapping = .oneToOne
    private var completed = false

    public init(engine: Engine, control: DriverControl, inputPath: String, outputPath: String) {
        self.engine = engine
        self.control = control
        self.inputPath = inputPath
        self.outputPath = outputPath
    }

    public func open() throws(DriverError) {
        do { try openFiles() } catch { throw .file(error) }
    }

    private func openFiles() throws(AudioFileError) {
        if Self.sameFile(inputPath, outputPath) {
            throw AudioFileError(path: outputPath, message: "is the input file; rendering over it would destroy it "
                                 + "(choose another --output)")
        }
        let reader = try AudioFileReader(path: inputPath)
        let settings = engine.settings
        guard let mapping = ChannelMapping.between(source: reader.channels, destination: settings.inputs) else {
            throw AudioFileError(path: inputPath, message: "has \(reader.channels) channels; the configuration's "
                                 + "[audio] inputs is \(settings.inputs), and only equal counts, mono to all and "
                                 + "all to mono can be mapped")
        }
        self.mapping = mapping
        let source = try ResampledReader(reader, outputRate: settings.sampleRate)
        let temporary = Self.temporaryPath(beside: outputPath)
        writer = try AudioFileWriter(path: temporary, sampleRate: settings.sampleRate,
                                     channels: settings.outputs, encoding: reader.encoding)
        temporaryPath = temporary
        self.source = source
        fileBuffer = AudioBuffer(channels: reader.channels, capacity: period)
    }

    public func close() {}

    /// Renders until the input ends (or a stop is requested). Offline work: it reads and
    /// writes files on the thread that runs it.
    public func run() -> DriverError? {
        guard let source, let writer, let fileBuffer else { return nil }
        let settings = engine.settings
        var inBlock = [Float](repeating: 0, count: period * source.channels)
        var outBlock = [Float](repeating: 0, count: period * settings.outputs)
        do {
            while !control.shouldStop() {
                let got = try inBlock.withMutableBuffer { p throws(AudioFileError) in
                    try source.read(into: p.baseAddress!, frames: period)
                }
                if got == 0 {
                    completed = true
                    break
                }
                // A last, short block runs as a whole period padded with silence; only its real
                // frames are written, so the output has the input's length.
                inBlock.withUnsafeBufferPointer { fileBuffer.deinterleave(from: $0.baseAddress!, frames: got, padTo: period) }
                engine.captureBuffer.clear(frames: period)
                mapping.mix(fileBuffer, channels: 0, count: fileBuffer.channels,
                            into: engine.captureBuffer, channels: 0, count: engine.captureBuffer.channels,
                            frames: period, startGain: 1, endGain: 1)
                let cycle = CycleInfo(framePosition: Int64(framesRendered),
                                      hostTimeNanos: Int64(framesRendered) * 1_000_000_000 / Int64(settings.sampleRate),
                                      sampleRate: settings.sampleRate)
                engine.process(frames: period, cycle: cycle)
                outBlock.withUnsafeMutableBufferPointer { engine.playbackBuffer.interleave(frames: got, into: $0.baseAddress!) }
                try outBlock.withBuffer { p throws(AudioFileError) in
                    try writer.write(p.baseAddress!, frames: got)
                }
                framesRendered += got
                control.framesProcessed.add(got, ordering: .relaxed)
            }
        } catch {
            return .file(error)
        }
        return nil
    }

    /// Closes the output and puts it in place when the whole input was rendered; otherwise
    /// removes the temporary file and says the output was left as it was.
    public func finish() throws(DriverError) {
        guard let writer, let temporaryPath else { return }
        self.writer = nil
        self.temporaryPath = nil
        do {
            try writer.close()
        } catch {
            unlink(temporaryPath)
            throw .file(error)
        }
        guard completed else {
            unlink(temporaryPath)
            throw .file(AudioFileError(path: outputPath, message: "not written: the render stopped after "
                                       + "\(framesRendered) frames, before the end of \(inputPath)"))
        }
        if rename(temporaryPath, outputPath) != 0 {
            let reason = Errno.last
            unlink(temporaryPath)
            throw .file(AudioFileError(path: outputPath, message: "cannot be replaced: \(reason)"))
        }
    }

    /// Whether two paths name the same file (a link or another spelling included).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// A name beside `path` (same directory, so the rename is atomic) that no other render uses.
    static func temporaryPath(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return "\(directory).\(name).\(getpid()).rendering"
    }
}
