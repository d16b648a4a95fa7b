import StageboxPortRules

/// Which channels of a source a connection carries into which channels of a destination: a
/// run of channels on each side (a whole port, or the one channel a connection selects) and
/// the mapping between the two runs. Built off the audio thread; mixing with it allocates nothing.
public struct ChannelRoute: Sendable, Equatable {
    public let mapping: ChannelMapping
    /// The first source channel (0-based) and how many it takes.
    public let sourceFirst: Int
    public let sourceCount: Int
    /// The first destination channel (0-based) and how many it feeds.
    public let destinationFirst: Int
    public let destinationCount: Int

    /// The route from `source`'s `sourceChannel` (1-based, nil = every channel) to
    /// `destination`'s `destinationChannel`, or nil when a channel is out of range or the
    /// channel counts do not map.
    init?(source: PortDescriptor, channel sourceChannel: Int?,
          destination: PortDescriptor, channel destinationChannel: Int?) {
        guard let (sf, sc) = Self.run(sourceChannel, of: source.channels),
              let (df, dc) = Self.run(destinationChannel, of: destination.channels),
              let mapping = ChannelMapping.between(source: sc, destination: dc)
        else { return nil }
        self.mapping = mapping
        (sourceFirst, sourceCount, destinationFirst, destinationCount) = (sf, sc, df, dc)
    }

    private static func run(_ channel: Int?, of channels: Int) -> (Int, Int)? {
        guard let channel else { return (0, channels) }
        return (1...channels).contains(channel) ? (channel - 1, 1) : nil
    }

    /// Every (source channel, destination channel) pair this route adds, 0-based: two
    /// connections between the same ports must not share one (it would be mixed in twice).
    var pairs: Set<ChannelPair> {
        switch mapping {
        case .oneToOne:
            return Set((0..<sourceCount).map { ChannelPair(source: sourceFirst + $0, destination: destinationFirst + $0) })
        case .monoToAll:
            return Set((0..<destinationCount).map { ChannelPair(source: sourceFirst, destination: destinationFirst + $0) })
        case .averageToMono:
            return Set((0..<sourceCount).map { ChannelPair(source: sourceFirst + $0, destination: destinationFirst) })
        }
    }

    /// Adds the route's source channels of `source` into its destination channels of
    /// `destination`, with a gain moving linearly from `startGain` to `endGain` across the block.
    @inline(__always)
    func mix(_ source: AudioBuffer, into destination: AudioBuffer, frames: Int, startGain: Float, endGain: Float) {
        mapping.mix(source, channels: sourceFirst, count: sourceCount,
                    into: destination, channels: destinationFirst, count: destinationCount,
                    frames: frames, startGain: startGain, endGain: endGain)
    }
}

/// One source channel feeding one destination channel (0-based).
struct ChannelPair: Hashable {
    let source: Int
    let destination: Int
}
