/// How the channels of a source map onto the channels of a destination.
public enum ChannelMapping: Sendable, Equatable {
    /// Equal channel counts: channel i to channel i.
    case oneToOne
    /// A mono source copied to every destination channel.
    case monoToAll
    /// Every source channel averaged into a mono destination.
    case averageToMono

    /// The mapping between `source` and `destination` channel counts, or nil when there is none.
    public static func between(source: Int, destination: Int) -> ChannelMapping? {
        if source == destination { return .oneToOne }
        if source == 1 { return .monoToAll }
        if destination == 1 { return .averageToMono }
        return nil
    }

    /// Adds `sourceCount` channels of `source` from `sourceFirst` into `destinationCount`
    /// channels of `destination` from `destinationFirst` (the counts are the mapping's: equal,
    /// a mono source, or a mono destination), for `frames` frames, with a gain that moves
    /// linearly from `startGain` to `endGain` across the block (equal gains: a constant gain).
    @inline(__always)
    public func mix(_ source: AudioBuffer, channels sourceFirst: Int, count sourceCount: Int,
             into destination: AudioBuffer, channels destinationFirst: Int, count destinationCount: Int,
             frames: Int, startGain: Float, endGain: Float) {
        let step = frames > 0 ? (endGain - startGain) / Float(frames) : 0
        switch self {
        case .oneToOne:
            for c in 0..<destinationCount {
                Self.add(source.channel(sourceFirst + c), to: destination.channel(destinationFirst + c), frames: frames,
                         gain: startGain, step: step)
            }
        case .monoToAll:
            for c in 0..<destinationCount {
                Self.add(source.channel(sourceFirst), to: destination.channel(destinationFirst + c), frames: frames,
                         gain: startGain, step: step)
            }
        case .averageToMono:
            let scale = 1 / Float(sourceCount)
            for c in 0..<sourceCount {
                Self.add(source.channel(sourceFirst + c), to: destination.channel(destinationFirst), frames: frames,
                         gain: startGain * scale, step: step * scale)
            }
        }
    }

    @inline(__always)
    private static func add(_ src: UnsafeMutablePointer<Float>, to dst: UnsafeMutablePointer<Float>,
                            frames: Int, gain: Float, step: Float) {
        if step == 0 {
            if gain == 1 {
                for i in 0..<frames { dst[i] += src[i] }
            } else if gain != 0 {
                for i in 0..<frames { dst[i] += src[i] * gain }
            }
        } else {
            for i in 0..<frames { dst[i] += src[i] * (gain + step * Float(i)) }
        }
    }
}
