import Synchronization

/// The shape of the Vonage Video SDK's audio bus, as a custom audio driver uses it: capture and
/// render settings (rate, channels), start and stop of capturing and rendering, and the two calls
/// that move 16-bit samples: `writeCaptureData` (audio the driver captured, for the session to
/// publish) and `readRenderData` (audio of the session, for the driver to play).
///
/// With Stagebox as the device, captured audio goes onto the bus through a sender port and
/// rendered audio comes off it through a receiver port; connect them as the appliance needs
/// (for example the capture port to `codec.out`, and `codec.in` to the render port).
public final class VonageAudioDevice: @unchecked Sendable {
    // @unchecked: each port is made once, under `setup`, and published by a release store of its
    // `…Ready` flag; the audio calls see it only after an acquire load of that flag. From then on
    // one driver thread per direction moves its audio (the SDK's contract), and any other thread
    // only reads atomics (the rings' fill). The start/stop flags are atomic.
    /// Sample rate and channel count (Vonage's `OTAudioFormat`).
    public struct AudioFormat: Sendable, Equatable {
        public var sampleRate: Int
        public var numChannels: Int
        public init(sampleRate: Int, numChannels: Int) {
            self.sampleRate = sampleRate
            self.numChannels = numChannels
        }
    }

    public let captureSettings: AudioFormat
    public let renderSettings: AudioFormat
    private let client: BusClient
    private let capturePortName: String
    private let renderPortName: String
    private let setup = Mutex<Void>(())
    private var capturePortOnceReady: SenderPort?
    private var renderPortOnceReady: ReceiverPort?
    private let captureReady = Atomic<Bool>(false)
    private let renderReady = Atomic<Bool>(false)
    private let capturing = Atomic<Bool>(false)
    private let rendering = Atomic<Bool>(false)

    public var isCapturing: Bool { capturing.load(ordering: .relaxed) }
    public var isRendering: Bool { rendering.load(ordering: .relaxed) }
    private var capturePort: SenderPort? { captureReady.load(ordering: .acquiring) ? capturePortOnceReady : nil }
    private var renderPort: ReceiverPort? { renderReady.load(ordering: .acquiring) ? renderPortOnceReady : nil }

    public init(client: BusClient, captureSettings: AudioFormat, renderSettings: AudioFormat,
                capturePortName: String = "capture", renderPortName: String = "render") {
        self.client = client
        self.captureSettings = captureSettings
        self.renderSettings = renderSettings
        self.capturePortName = capturePortName
        self.renderPortName = renderPortName
    }

    /// The bus names of the ports once they exist (`client.capture`, `client.render`).
    public var captureBusName: String? { capturePort?.name }
    public var renderBusName: String? { renderPort?.name }

    public func initCapture() throws(BusClientError) {
        try setup.withLock { _ throws(BusClientError) in
            guard !captureReady.load(ordering: .relaxed) else { return }
            capturePortOnceReady = try client.addSender(name: capturePortName, title: "Vonage capture",
                                                        channels: captureSettings.numChannels,
                                                        sampleRate: captureSettings.sampleRate, format: .int16)
            captureReady.store(true, ordering: .releasing)
        }
    }

    public func initRendering() throws(BusClientError) {
        try setup.withLock { _ throws(BusClientError) in
            guard !renderReady.load(ordering: .relaxed) else { return }
            renderPortOnceReady = try client.addReceiver(name: renderPortName, title: "Vonage render",
                                                         channels: renderSettings.numChannels,
                                                         sampleRate: renderSettings.sampleRate, format: .int16)
            renderReady.store(true, ordering: .releasing)
        }
    }

    public func startCapture() throws(BusClientError) { try initCapture(); capturing.store(true, ordering: .relaxed) }
    public func stopCapture() { capturing.store(false, ordering: .relaxed) }
    public func startRendering() throws(BusClientError) { try initRendering(); rendering.store(true, ordering: .relaxed) }
    public func stopRendering() { rendering.store(false, ordering: .relaxed) }

    /// Puts `count` captured frames (16-bit, interleaved) on the bus. Returns the frames taken
    /// (0 while not capturing). Never blocks.
    @discardableResult
    public func writeCaptureData(_ samples: UnsafePointer<Int16>, count: Int) -> Int {
        guard isCapturing, let port = capturePort else { return 0 }
        port.send(int16: samples, frames: count)
        return count
    }

    /// Fills `buffer` with `count` frames (16-bit, interleaved) from the bus. Returns `count`
    /// (silence fills what the bus did not have yet), or 0 while not rendering. Never blocks.
    @discardableResult
    public func readRenderData(_ buffer: UnsafeMutablePointer<Int16>, count: Int) -> Int {
        guard isRendering, let port = renderPort else { return 0 }
        port.receive(int16: buffer, frames: count)
        return count
    }

    /// Milliseconds of captured audio the bus has not taken yet.
    public var estimatedCaptureDelay: Int { (capturePort?.fill ?? 0) * 1000 / max(1, client.sampleRate) }
    /// Milliseconds of audio waiting to be rendered.
    public var estimatedRenderDelay: Int { (renderPort?.fill ?? 0) * 1000 / max(1, client.sampleRate) }

    /// The ports, for reports: underruns, overruns, fill and ratio.
    public var capture: SenderPort? { capturePort }
    public var render: ReceiverPort? { renderPort }
}
