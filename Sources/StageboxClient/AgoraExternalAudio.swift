import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A frame of 16-bit audio as Agora's `AudioFrame` describes it.
public struct AgoraAudioFrame {
    public var samplesPerChannel: Int
    public var bytesPerSample: Int { 2 }
    public var channels: Int
    public var samplesPerSec: Int
    /// Interleaved samples, `samplesPerChannel × channels` of them.
    public var buffer: UnsafeMutablePointer<Int16>
    /// When the frame plays, in milliseconds of the monotonic clock.
    public var renderTimeMs: Int64
}

/// Agora's `IAudioFrameObserver`, the playback side.
public protocol AgoraAudioFrameObserver: AnyObject, Sendable {
    /// Called for every 10 ms of playback audio; return false to drop the frame.
    func onPlaybackAudioFrame(_ frame: AgoraAudioFrame) -> Bool
}

/// The shape of Agora's external audio source and sink: push frames you captured, pull frames to
/// play, or register an observer that is handed every playback frame.
public final class AgoraExternalAudio: @unchecked Sendable {
    // @unchecked: as with Agora's own object, one thread sets it up (enable…, set…Observer) and
    // the audio calls follow; the observer thread reads only what is set before it starts and is
    // joined before any of that changes.
    private let client: BusClient
    private var source: SenderPort?
    private var sink: ReceiverPort?
    private var sinkRate = 0
    private var sinkChannels = 0
    private var observerThread: PosixThread?
    private var observer: AgoraAudioFrameObserver?
    private let observing = Atomic<Bool>(false)

    public init(client: BusClient) {
        self.client = client
    }

    deinit { stopObserving() }

    /// Enables pushing frames (the source port `client.source`).
    public func enableExternalAudioSource(sampleRate: Int, channels: Int, portName: String = "source") throws(BusClientError) {
        source = try client.addSender(name: portName, title: "Agora external source", channels: channels,
                                      sampleRate: sampleRate, format: .int16)
    }

    /// Enables pulling frames (the sink port `client.sink`).
    public func enableExternalAudioSink(sampleRate: Int, channels: Int, portName: String = "sink") throws(BusClientError) {
        sink = try client.addReceiver(name: portName, title: "Agora external sink", channels: channels,
                                      sampleRate: sampleRate, format: .int16)
        sinkRate = sampleRate
        sinkChannels = channels
    }

    public var sourcePort: SenderPort? { source }
    public var sinkPort: ReceiverPort? { sink }

    /// Pushes `samples` frames of 16-bit interleaved audio. Returns 0, or -1 when no source is enabled.
    @discardableResult
    public func pushExternalAudioFrame(_ data: UnsafePointer<Int16>, samples: Int, timestamp: Int64) -> Int32 {
        guard let source else { return -1 }
        source.send(int16: data, frames: samples)
        return 0
    }

    /// Pulls `lengthInBytes` bytes of 16-bit interleaved playback audio into `data`. Returns
    /// false when no sink is enabled or the length is not whole frames.
    @discardableResult
    public func pullPlaybackAudioFrame(into data: UnsafeMutableRawPointer, lengthInBytes: Int) -> Bool {
        guard let sink, lengthInBytes % (2 * sink.channels) == 0 else { return false }
        sink.receive(int16: data.assumingMemoryBound(to: Int16.self), frames: lengthInBytes / (2 * sink.channels))
        return true
    }

    /// Registers an observer handed every 10 ms of the sink's audio, paced by the bus, on a
    /// thread of its own; nil unregisters it. Throws when that thread cannot start (then no
    /// observer is registered).
    public func setPlaybackAudioFrameObserver(_ newObserver: AgoraAudioFrameObserver?) throws(SystemCallError) {
        stopObserving()
        observer = newObserver
        guard newObserver != nil, sink != nil else { return }
        observing.store(true, ordering: .relaxed)
        do throws(SystemCallError) {
            // Unowned: stopObserving() joins the thread before the object goes away.
            observerThread = try PosixThread.start(named: "the Agora playback observer") { [unowned self] in self.observe() }.get()
        } catch {
            observing.store(false, ordering: .relaxed)
            observer = nil
            throw error
        }
    }

    private func stopObserving() {
        guard observing.exchange(false, ordering: .relaxed) else { return }
        observerThread?.join()
        observerThread = nil
    }

    private func observe() {
        guard let sink else { return }
        let frames = sinkRate / 100
        let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: frames * sinkChannels)
        defer { buffer.deallocate() }
        while observing.load(ordering: .relaxed) {
            guard sink.waitForData(frames: frames, timeoutSeconds: 0.1) else { continue }
            sink.receive(int16: buffer, frames: frames)
            let frame = AgoraAudioFrame(samplesPerChannel: frames, channels: sinkChannels, samplesPerSec: sinkRate,
                                        buffer: buffer, renderTimeMs: Int64(monotonicSeconds() * 1000))
            _ = observer?.onPlaybackAudioFrame(frame)
        }
    }
}
