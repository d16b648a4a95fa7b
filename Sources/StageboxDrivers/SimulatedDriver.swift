import Logging
import StageboxEngine
import StageboxFormatting
import StageboxRealtime
import StageboxAudioFiles
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A board with no codec: the engine paced by the monotonic clock at the configured rate and
/// period, capture fed by a test signal, playback discarded or written to a WAV file.
///
/// This is what runs on a laptop or a build machine (`stagebox run --simulate`).
///
/// `@unchecked Sendable`: the loop's state is touched only by `run` on the audio thread; the
/// recorder's queues are single-producer single-consumer (audio thread in, control thread out).
public final class SimulatedDriver: AudioDriver, @unchecked Sendable {
    public let engine: Engine
    public let control: DriverControl
    public let realtimePriority: Int
    private let input: ToneGenerator
    /// Playback on its way to the output file, if there is one.
    private let recorder: PlaybackRecorder?
    /// How many times faster than real time the simulated codec clock runs (1 = real time).
    public let speed: Double
    /// Frames of the simulated codec's clock so far; it goes on across pauses.
    private var position: Int64 = 0
    private var timing: CycleSupervision
    /// With a loop cable: how many frames after the engine plays a frame its inputs capture it.
    public let loopDelay: Int?
    /// The outputs played so far, `loopLength` frames of each (frame f at f % loopLength).
    private let loopHistory: UnsafeMutablePointer<Float>?
    private let loopLength: Int

    /// - Parameters:
    ///   - inputSignal: what the simulated codec inputs hear.
    ///   - output: a WAV file to write playback into, or nil to discard it.
    public init(engine: Engine, control: DriverControl, inputSignal: ToneSignal,
                inputFrequency: Double = 440, inputLevelDB: Double = -12,
                output: AudioFileWriter? = nil, speed: Double = 1, realtimePriority: Int = 0,
                loopDelay: Int? = nil) {
        self.engine = engine
        self.speed = speed > 0 && speed.isFinite ? speed : 1
        self.control = control
        let period = engine.settings.period
        self.realtimePriority = realtimePriority
        let rate = engine.settings.sampleRate
        input = ToneGenerator(signal: inputSignal, frequency: inputFrequency, levelDB: inputLevelDB, sampleRate: rate)
        recorder = output.map { PlaybackRecorder(writer: $0, channels: engine.settings.outputs, period: period) }
        timing = CycleSupervision(control: control, periodNanos: Int64(Double(period * 1_000_000_000 / rate) / self.speed))
        // A capture can only hear what was played before its period began: at least a period.
        self.loopDelay = loopDelay.map { max($0, period) }
        loopLength = (self.loopDelay ?? 0) + period
        if self.loopDelay != nil {
            let history = UnsafeMutablePointer<Float>.allocate(capacity: loopLength * engine.settings.outputs)
            history.initialize(repeating: 0, count: loopLength * engine.settings.outputs)
            loopHistory = history
        } else {
            loopHistory = nil
        }
    }

    deinit { loopHistory?.deallocate() }

    public var name: String { "simulated board" }

    public func openReport() -> [(Logger.Level, String)] {
        let s = engine.settings
        let pace = speed != 1 ? ", \(fixed(speed, digits: 1))× real time" : ""
        let loop = loopDelay.map { ", outputs looped to inputs \($0) frames later" } ?? ""
        return [(.info, "simulated board: \(s.inputs) in, \(s.outputs) out, \(s.sampleRate) Hz, "
                 + "\(period) frames per period\(pace)\(loop)")]
    }

    /// Nothing to open: the simulated codec is always there.
    public func open() throws(DriverError) {}
    public func close() {}

    /// Audio thread: processes one period per period of the simulated codec's clock until stopped.
    ///
    /// The position and the timing live in locals while the loop runs: a class's stored
    /// properties are checked for exclusive access at run time on every touch, a local's when
    /// it compiles. Each period reads the clock twice: on waking, and when its work is done.
    public func run() -> DriverError? {
        let rate = Int64(engine.settings.sampleRate)
        let stats = control.statistics
        stats.audioThread.store(currentThreadID(), ordering: .relaxed)
        defer { stats.audioThread.store(0, ordering: .relaxed) }
        let start = monotonicNanoseconds()
        let first = position
        var position = self.position
        var timing = self.timing
        defer {
            self.position = position
            self.timing = timing
        }
        let period = self.period
        let nanosPerFrame = 1e9 / Double(rate) / speed
        timing.restart()
        engine.outputFade.fadeInFromSilence() // every start and resume fades the outputs in
        var now = start
        while !control.shouldStop() {
            // The period boundary on the simulated codec's clock.
            let deadline = start + Int64(Double(position - first + Int64(period)) * nanosPerFrame)
            if deadline > now {
                sleepUntil(monotonicNanos: deadline)
                now = monotonicNanoseconds()
            }
            timing.wakeup(at: now, due: deadline, paced: true)
            let t0 = now
            let cycle = CycleInfo(framePosition: position, hostTimeNanos: t0, sampleRate: Int(rate), startNanos: t0)
            if let history = loopHistory, let delay = loopDelay {
                hearLoop(history, delay: delay, position: position)
            } else {
                input.process(engine.captureBuffer, frames: period, cycle: cycle) // every input the same
            }
            engine.process(frames: period, cycle: cycle)
            if let history = loopHistory { keepForLoop(history, position: position) }
            recorder?.push(engine.playbackBuffer, frames: period)
            position += Int64(period)
            now = timing.cycleDone(frames: period, startedAt: t0)
        }
        return nil
    }

    /// Audio thread: input c hears output c (inputs beyond the outputs hear the last one)
    /// `delay` frames after it was played.
    private func hearLoop(_ history: UnsafeMutablePointer<Float>, delay: Int, position: Int64) {
        let outputs = engine.settings.outputs
        for c in 0..<engine.captureBuffer.channels {
            guard outputs > 0 else { engine.captureBuffer.channel(c).update(repeating: 0, count: period); continue }
            let source = history + min(c, outputs - 1) * loopLength
            let destination = engine.captureBuffer.channel(c)
            for i in 0..<period {
                let f = (position + Int64(i) - Int64(delay)) % Int64(loopLength)
                destination[i] = f < 0 ? 0 : source[Int(f)]
            }
        }
    }

    /// Audio thread: keeps this period's outputs for the loop.
    private func keepForLoop(_ history: UnsafeMutablePointer<Float>, position: Int64) {
        for c in 0..<engine.settings.outputs {
            let source = engine.playbackBuffer.channel(c)
            let destination = history + c * loopLength
            for i in 0..<period { destination[Int((position + Int64(i)) % Int64(loopLength))] = source[i] }
        }
    }

    /// Control thread: writes what playback produced to the file, if any.
    /// The output file's ring holds 256 periods: 341 ms at 64 frames, less with `--speed`.
    public var needsFrequentService: Bool { recorder != nil }

    public func service() throws(DriverError) {
        do { try recorder?.drain() } catch { throw .file(error) }
    }

    /// Writes the rest of the output and closes the file. Periods the writer could not keep up
    /// with are an error that says how many.
    public func finish() throws(DriverError) {
        guard let recorder else { return }
        do {
            try recorder.drain()
            try recorder.writer.close()
        } catch {
            throw .file(error)
        }
        let lost = recorder.droppedPeriods
        if lost > 0 {
            throw .file(AudioFileError(path: recorder.writer.path, message: "\(lost) periods of playback were lost: "
                                       + "the disk did not keep up with the simulated codec"))
        }
    }
}
