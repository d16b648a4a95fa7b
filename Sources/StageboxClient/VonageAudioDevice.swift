/// The shape of the Vonage Video SDK's audio bus, as a custom audio driver uses it: capture and
/// render settings (rate, channels), start and stop of capturing and rendering, and the two calls
/// that move 16-bit samples: `writeCaptureData` (audio the driver captured, for the session to
/// publish) and `readRenderData` (audio of the session, for the driver to play).
///
/// With Stagebox as the device, captured audio goes onto the bus through a sender port and
/// rendered audio comes off it through a receiver port; connect them as the appliance needs
/// (for example the capture port to `codec.out`, and `codec.in` to the render port).
public final class VonageAudioDevice: @unchecked Sendable {
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
    private var capturePort: SenderPort?
    private var renderPort: ReceiverPort?
    public private(set) var isCapturing = false
    public private(set) var isRendering = false

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
        guard capturePort == nil else { return }
        capturePort = try client.addSender(name: capturePortName, title: "Vonage capture",
                                           channels: captureSettings.numChannels,
                                           sampleRate: captureSettings.sampleRate, format: .int16)
    }

    public func initRendering() throws(BusClientError) {
        guard renderPort == nil else { return }
        renderPort = try client.addReceiver(name: renderPortName, title: "Vonage render",
                                            channels: renderSettings.numChannels,
                                            sampleRate: renderSettings.sampleRate, format: .int16)
    }

    public func startCapture() throws(BusClientError) { try initCapture(); isCapturing = true }
    public func stopCapture() { isCapturing = false }
    public func startRendering() throws(BusClientError) { try initRendering(); isRendering = true }
    public func stopRendering() { isRendering = false }

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
