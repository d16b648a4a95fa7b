/// What the ALSA driver asks of the codec, beside the period: that is the engine's
/// (`EngineSettings.period`), the one number the driver, the engine and the bus share.
public struct ALSAParameters: Sendable, Equatable {
    /// The capture device name of a codec without inputs (a DAC alone).
    public static let noCapture = "none"

    /// The ALSA capture PCM, or `none`.
    public var captureDevice: String
    public var playbackDevice: String
    public var format: SampleFormat
    public var sampleRate: Int
    public var inputs: Int
    public var outputs: Int
    /// Periods in the buffer.
    public var periods: Int
    /// SCHED_FIFO priority of the audio thread; 0 = normal scheduling.
    public var realtimePriority: Int

    public init(captureDevice: String, playbackDevice: String, format: SampleFormat, sampleRate: Int,
                inputs: Int, outputs: Int, periods: Int, realtimePriority: Int) {
        self.captureDevice = captureDevice
        self.playbackDevice = playbackDevice
        self.format = format
        self.sampleRate = sampleRate
        self.inputs = inputs
        self.outputs = outputs
        self.periods = periods
        self.realtimePriority = realtimePriority
    }
}

/// How the loop waits between periods.
public enum Pacing: Sendable, Equatable {
    /// Decide from the device: a sound card's interrupt if it paces, a timer if it does not
    /// (user-space plugins such as `null` and `file` are always ready).
    case automatic
    /// Never wait: process as fast as the device accepts (tests and measurements).
    case free
}
