import StageboxEngine
import StageboxRealtime
import StageboxAudioFiles

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A board with no codec: the engine paced by the monotonic clock at the configured rate and
/// period, capture fed by a test signal, playback discarded or written to a WAV file.
///
/// This is what runs on a laptop or a build machine (`stagebox run --simulate`).
public final class SimulatedDriver: @unchecked Sendable {
    public let engine: Engine
    public let control: DriverControl
    public let period: Int
    private let input: ToneGenerator
    private let inputBuffer: AudioBuffer
    /// Playback frames waiting for the writer thread, interleaved.
    private let recorder: PlaybackRecorder?
    /// How many times faster than real time the simulated codec clock runs (1 = real time).
    public let speed: Double

    /// - Parameters:
    ///   - inputSignal: what the simulated codec inputs hear.
    ///   - output: a WAV file to write playback into, or nil to discard it.
    public init(engine: Engine, control: DriverControl, period: Int, inputSignal: ToneSignal,
                inputFrequency: Double = 440, inputLevelDB: Double = -12,
                output: AudioFileWriter? = nil, speed: Double = 1) {
        self.engine = engine
        self.speed = speed > 0 && speed.isFinite ? speed : 1
        self.control = control
        self.period = period
        let rate = engine.settings.sampleRate
        input = ToneGenerator(signal: inputSignal, frequency: inputFrequency, levelDB: inputLevelDB, sampleRate: rate)
        inputBuffer = AudioBuffer(channels: 1, capacity: period)
        recorder = output.map { PlaybackRecorder(writer: $0, channels: engine.settings.outputs, period: period) }
        control.statistics.periodNanos.store(Int(Double(period * 1_000_000_000 / rate) / self.speed), ordering: .relaxed)
    }

    /// Audio thread: processes one period per period of wall time until stopped.
    public func runLoop() {
        let rate = Int64(engine.settings.sampleRate)
        let stats = control.statistics
        stats.audioThread.store(currentThreadID(), ordering: .relaxed)
        defer { stats.audioThread.store(0, ordering: .relaxed) }
        let start = monotonicNanoseconds()
        var position: Int64 = 0
        var lastWake: Int64 = 0
        let periodNanos = Int64(Double(Int64(period) * 1_000_000_000 / rate) / speed)
        let nanosPerFrame = 1e9 / Double(rate) / speed
        while !control.shouldStop() {
            // The period boundary on the simulated codec's clock.
            let deadline = start + Int64(Double(position + Int64(period)) * nanosPerFrame)
            var now = monotonicNanoseconds()
            if deadline > now {
                sleepUntil(monotonicNanos: deadline)
                now = monotonicNanoseconds()
            }
            stats.recordWakeupLateness(nanos: Int(max(0, now - deadline)))
            if lastWake > 0 && (now - lastWake) * 10 > periodNanos * 18 {
                stats.lateWakeups.add(1, ordering: .relaxed)
                control.report(.lateWakeup, at: now, duration: now - lastWake)
            }
            lastWake = now
            let t0 = now
            input.process(inputBuffer, frames: period, cycle: CycleInfo(framePosition: position, hostTimeNanos: t0,
                                                                         sampleRate: Int(rate)))
            for c in 0..<engine.captureBuffer.channels {
                engine.captureBuffer.channel(c).update(from: inputBuffer.channel(0), count: period)
            }
            engine.process(frames: period, cycle: CycleInfo(framePosition: position, hostTimeNanos: t0,
                                                            sampleRate: Int(rate)))
            recorder?.push(engine.playbackBuffer, frames: period)
            position += Int64(period)
            control.framesProcessed.add(period, ordering: .relaxed)
            stats.recordCycle(nanos: Int(monotonicNanoseconds() - t0))
        }
    }

    /// Control thread: writes what playback produced to the file, if any. Call it while running
    /// (the runner's tick) and once after.
    public func drainOutput() throws(AudioFileError) {
        try recorder?.drain()
    }

    public func finish() throws(AudioFileError) {
        try recorder?.drain()
        try recorder?.writer.close()
    }
}
