/// A planar block of Float32 samples: `channels` channels of up to `capacity` frames each.
///
/// Allocated once when a port is created; the audio thread only reads and writes it.
public final class AudioBuffer: @unchecked Sendable {
    public let channels: Int
    public let capacity: Int
    private let storage: UnsafeMutablePointer<Float>

    public init(channels: Int, capacity: Int) {
        precondition(channels > 0 && capacity > 0)
        self.channels = channels
        self.capacity = capacity
        storage = .allocate(capacity: channels * capacity)
        storage.initialize(repeating: 0, count: channels * capacity)
    }

    deinit { storage.deallocate() }

    /// The samples of one channel.
    @inline(__always)
    public func channel(_ index: Int) -> UnsafeMutablePointer<Float> {
        storage + index * capacity
    }

    /// Sets the first `frames` frames of every channel to silence.
    @inline(__always)
    public func clear(frames: Int) {
        for c in 0..<channels { channel(c).update(repeating: 0, count: frames) }
    }

    /// Clamps the first `frames` frames of every channel to [-1, 1] (NaN becomes 0).
    @inline(__always)
    public func clamp(frames: Int) {
        for c in 0..<channels {
            let p = channel(c)
            for i in 0..<frames { p[i] = Self.clamped(p[i]) }
        }
    }

    /// `x` in [-1, 1], NaN as 0: three selects, each a vector instruction or two
    /// (compare-and-mask, max, min), so the compiler does four or eight samples at a time.
    /// The one clamp of a sample leaving the bus, here and in the codec's conversions.
    @inlinable @inline(__always)
    public static func clamped(_ x: Float) -> Float {
        let number = x == x ? x : 0 // NaN, the one value unequal to itself, to silence
        let floor = number < -1 ? -1 : number
        return floor > 1 ? 1 : floor
    }

    /// Replaces samples that are not finite (NaN, ±infinity) with silence: what came from a
    /// client is mixed with everything else, and one NaN would silence the whole mix.
    @inline(__always)
    public func replaceNonFinite(frames: Int) {
        for c in 0..<channels {
            let p = channel(c)
            // A select, not a branch: the compiler does it four or eight samples at a time.
            for i in 0..<frames {
                let x = p[i]
                p[i] = x.isFinite ? x : 0
            }
        }
    }
}
