import Synchronization

/// Where the period being processed sits on the codec clock.
public struct CycleInfo: Sendable {
    /// Frames processed since the driver started: the position of this period's first frame.
    public var framePosition: Int64
    /// The monotonic time of this period's first frame, in nanoseconds.
    public var hostTimeNanos: Int64
    public var sampleRate: Int
    /// The monotonic time the audio thread began this period: every deadline of the cycle (the
    /// filters' share of it) counts from here.
    public var startNanos: Int64

    public init(framePosition: Int64, hostTimeNanos: Int64, sampleRate: Int, startNanos: Int64? = nil) {
        self.framePosition = framePosition
        self.hostTimeNanos = hostTimeNanos
        self.sampleRate = sampleRate
        self.startNanos = startNanos ?? hostTimeNanos
    }
}

/// What a port does on the audio thread.
///
/// Called once per period on the audio thread: it must not allocate, lock, block or log.
public protocol PortProcessor: AnyObject, Sendable {
    /// A sender writes `frames` frames into `buffer`; a filter processes `buffer` in place;
    /// a receiver takes the mix that `buffer` holds.
    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo)
    /// Whether a sender may rest while no connection takes its output: a generator (the test
    /// tone) then costs nothing. A client's port must run regardless, to drain its ring.
    var restsWhenUnheard: Bool { get }
}

extension PortProcessor {
    public var restsWhenUnheard: Bool { false }
}

/// One source of a port's input in this period: its audio, which of its channels go to which
/// of the port's, and how it fades in.
public struct PortInput {
    public let source: Port
    public let route: ChannelRoute
    public let startGain: Float
    public let endGain: Float

    /// Adds this source into `destination` (routed, with its fade) for `frames` frames;
    /// `destination` has the receiving port's channels.
    @inline(__always)
    public func mix(into destination: AudioBuffer, frames: Int) {
        route.mix(source.buffer, into: destination, frames: frames, startGain: startGain, endGain: endGain)
    }

    /// Whether this input alone makes a port of `channels` channels: every channel, one to one,
    /// at unity gain throughout the period (so the mix is a copy).
    func isWholeUnityCopy(into channels: Int) -> Bool {
        route.mapping == .oneToOne && route.sourceCount == channels && route.destinationCount == channels
            && route.sourceFirst == 0 && route.destinationFirst == 0 && startGain == 1 && endGain == 1
    }

    /// Copies the source into `destination` (an input for which `isWholeUnityCopy` holds).
    @inline(__always)
    func copy(into destination: AudioBuffer, frames: Int) {
        for c in 0..<destination.channels {
            destination.channel(c).update(from: source.buffer.channel(c), count: frames)
        }
    }

    /// Copies the source into `destination` clamped to [-1, 1], NaN as silence, in one pass (an
    /// input for which `isWholeUnityCopy` holds, into a receiver).
    @inline(__always)
    func copyClamped(into destination: AudioBuffer, frames: Int) {
        for c in 0..<destination.channels {
            let from = source.buffer.channel(c), to = destination.channel(c)
            for i in 0..<frames { to[i] = AudioBuffer.clamped(from[i]) }
        }
    }
}

/// A receiver that takes each source apart instead of their mix (Audiobus's separate streams).
public protocol SeparateInputsProcessor: PortProcessor {
    /// Called on the audio thread instead of `process`, with the port's sources in order:
    /// the order of its connections, then any that fade out in this period.
    func process(inputs: [PortInput], frames: Int, cycle: CycleInfo)
}

/// A port on the bus: its description, its buffer, and its processor.
///
/// @unchecked Sendable: the control side makes a port and hands it to the audio thread in a
/// graph snapshot (published with release ordering by `SnapshotExchange`). After that only the
/// audio thread touches `gain` and the buffer's samples; `muted` is atomic; everything else is
/// immutable.
public final class Port: @unchecked Sendable {
    public let descriptor: PortDescriptor
    /// A sender's or filter's output; a receiver's mixed input.
    public let buffer: AudioBuffer
    let processor: PortProcessor?
    /// The processor again when it takes its sources apart (decided once, off the audio thread).
    let separateInputs: SeparateInputsProcessor?
    /// Muted ports put out silence (faded over one period).
    let muted = Atomic<Bool>(false)
    /// Peak and RMS of what the port puts out (a receiver: what it takes).
    public let meter: PortMeter
    /// The gain the audio thread applied at the end of the last period.
    var gain: Float = 1

    init(descriptor: PortDescriptor, capacity: Int, processor: PortProcessor?) {
        self.descriptor = descriptor
        self.buffer = AudioBuffer(channels: descriptor.channels, capacity: capacity)
        self.meter = PortMeter(channels: descriptor.channels)
        self.processor = processor
        self.separateInputs = processor as? SeparateInputsProcessor
    }

    public var isMuted: Bool { muted.load(ordering: .relaxed) }

    /// Audio side: moves the gain towards muted or unmuted across this period.
    @inline(__always)
    func applyMute(frames: Int) {
        let target: Float = muted.load(ordering: .relaxed) ? 0 : 1
        if gain == target {
            if target == 0 { buffer.clear(frames: frames) }
            return
        }
        let step = (target - gain) / Float(frames)
        for c in 0..<buffer.channels {
            let p = buffer.channel(c)
            for i in 0..<frames { p[i] *= gain + step * Float(i + 1) }
        }
        gain = target
    }
}
