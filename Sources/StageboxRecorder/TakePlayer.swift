import Logging
import StageboxAudioFiles
import StageboxEngine
import StageboxRealtime
import StageboxSystem
import Synchronization

/// Plays a take through `codec.out` (the `play` trigger): a thread reads the file (converted to
/// the codec's rate) into a ring, and a sender port, `stagebox.play`, takes it on the audio thread.
public final class TakePlayer: Sendable {
    public static let portName = "stagebox.play"
    private let engine: Engine
    private let logger: Logger
    private let playback = Mutex<Playback?>(nil)

    public init(engine: Engine, logger: Logger) {
        self.engine = engine
        self.logger = logger
    }

    public var isPlaying: Bool { playback.withLock { $0 != nil } }

    /// Starts playing `path` from its beginning (stopping what plays); the reason when it cannot.
    public func play(_ path: String) -> Result<Void, RecorderRefusal> {
        stop()
        let rate = engine.settings.sampleRate
        let outputs = engine.settings.outputs
        let source: ResampledReader
        do {
            source = try ResampledReader(AudioFileReader(path: path), outputRate: rate)
        } catch {
            return .failure(.init(reason: "\(error)"))
        }
        let p = Playback(path: path, ring: SampleRing(channels: outputs, capacityFrames: rate))
        do {
            try engine.addPort(.init(name: Self.portName, title: "Playing \(path)", kind: .sender, channels: outputs),
                               processor: p.processor, ownedByStagebox: true)
            try engine.connect(from: Self.portName, to: BuiltinPort.codecOut)
        } catch {
            try? engine.removePort(Self.portName)
            return .failure(.init(reason: "\(error)"))
        }
        let feeder = Feeder(source, into: p, logger: logger)
        do {
            let loop = try ServiceLoop(named: "the take player")
            try loop.start { _ in .init(deadline: feeder.feed()) }
            p.loop = loop
            playback.withLock { $0 = p }
            logger.info("player: playing \(path) through codec.out")
            return .success(())
        } catch {
            try? engine.removePort(Self.portName)
            return .failure(.init(reason: "\(error)"))
        }
    }

    /// Stops playing; false when nothing played.
    @discardableResult
    public func stop() -> Bool {
        guard let p = playback.withLock({ let p = $0; $0 = nil; return p }) else { return false }
        p.loop?.stop()
        try? engine.removePort(Self.portName)
        return true
    }

    /// Control thread, now and then: ends a playback that has played to its end; true then.
    public func tick() -> Bool {
        guard let p = playback.withLock({ $0 }), p.processor.drained.load(ordering: .relaxed) else { return false }
        stop()
        logger.info("player: \(p.path) played to its end")
        return true
    }

    final class Playback: @unchecked Sendable {
        // @unchecked: `loop` is set once before the playback is shared; the rest is the ring
        // (single producer, single consumer) and the processor's atomics.
        let path: String
        let ring: SampleRing
        let processor: PlayerProcessor
        var loop: ServiceLoop?

        init(path: String, ring: SampleRing) {
            self.path = path
            self.ring = ring
            processor = PlayerProcessor(ring: ring)
        }
    }

    /// The feeding thread's turns: the file's channels onto the codec's (a mono take on every
    /// output, extra channels left out), as the ring has room, until the end of the file.
    private final class Feeder: @unchecked Sendable {
        // @unchecked: made on the thread that opened the file, then used only by the feeding
        // thread's turns, one after another.
        private let source: ResampledReader
        private let playback: Playback
        private let logger: Logger
        private static let chunk = 2048
        private var input: [Float]
        private var output: [Float]
        private var ended = false

        init(_ source: ResampledReader, into playback: Playback, logger: Logger) {
            self.source = source
            self.playback = playback
            self.logger = logger
            input = [Float](repeating: 0, count: Self.chunk * source.channels)
            output = [Float](repeating: 0, count: Self.chunk * playback.ring.channels)
        }

        /// Fills the ring; returns when to look again (nil once the file has ended).
        func feed() -> Int64? {
            let ring = playback.ring
            let chunk = Self.chunk
            while !ended && ring.freeFrames >= chunk {
                let n: Int
                do {
                    n = try input.withUnsafeMutableBufferPointer { try source.read(into: $0.baseAddress!, frames: chunk) }
                } catch {
                    logger.error("player: \(error)")
                    n = 0
                }
                if n == 0 {
                    ended = true
                    playback.processor.endOfInput.store(true, ordering: .releasing)
                    break
                }
                for i in 0..<n {
                    for c in 0..<ring.channels {
                        output[i * ring.channels + c] = source.channels == 1 ? input[i]
                            : c < source.channels ? input[i * source.channels + c] : 0
                    }
                }
                _ = output.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frames: n) }
            }
            return ended ? nil : monotonicNanoseconds() + 10_000_000
        }
    }

    /// The audio thread's side: the ring into the port, silence when it runs dry.
    final class PlayerProcessor: PortProcessor, @unchecked Sendable {
        // @unchecked: the ring is single-producer single-consumer; the flags are atomic.
        let ring: SampleRing
        let endOfInput = Atomic<Bool>(false)
        let drained = Atomic<Bool>(false)

        init(ring: SampleRing) { self.ring = ring }

        func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
            let ended = endOfInput.load(ordering: .acquiring)
            let n = ring.read(maxFrames: frames) { buffer.channel($0) }
            if n < frames {
                for c in 0..<buffer.channels { (buffer.channel(c) + n).update(repeating: 0, count: frames - n) }
                if ended && ring.availableFrames == 0 { drained.store(true, ordering: .relaxed) }
            }
        }
    }
}
