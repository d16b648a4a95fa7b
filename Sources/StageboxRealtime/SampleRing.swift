import Synchronization

/// A lock-free single-producer single-consumer ring of interleaved samples, written and read in
/// whole frames: the audio thread writes a period, another thread reads what is there.
///
/// Neither side blocks or allocates after `init`. A write that does not fit is refused whole,
/// so the reader never sees a frame torn in two, nor a period with a hole in it.
public final class SampleRing: @unchecked Sendable {
    // @unchecked: `storage` is written only between `tail`'s load and store by the one producer,
    // and read only between `head`'s load and store by the one consumer; the acquire/release
    // pairs on the indices order those accesses.
    public let channels: Int
    /// Frames the ring holds when full.
    public let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>
    /// Frames read ever; written by the consumer only.
    private let head = Atomic<Int>(0)
    /// Frames written ever; written by the producer only.
    private let tail = Atomic<Int>(0)

    public init(channels: Int, capacityFrames: Int) {
        precondition(channels > 0 && capacityFrames > 0, "a sample ring needs channels and room")
        self.channels = channels
        self.capacityFrames = capacityFrames
        storage = .allocate(capacity: channels * capacityFrames)
        storage.initialize(repeating: 0, count: channels * capacityFrames)
    }

    deinit { storage.deallocate() }

    /// Frames waiting to be read (exact on the consumer side).
    public var availableFrames: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

    /// Producer: copies `frames` frames from per-channel buffers `channel(c)`; false, and
    /// nothing written, when they do not all fit.
    @inline(__always)
    public func write(frames: Int, channel: (Int) -> UnsafePointer<Float>) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t - head.load(ordering: .acquiring) + frames <= capacityFrames else { return false }
        let start = t % capacityFrames
        for c in 0..<channels {
            let source = channel(c)
            var index = start
            for i in 0..<frames {
                storage[index * channels + c] = source[i]
                index += 1
                if index == capacityFrames { index = 0 }
            }
        }
        tail.store(t + frames, ordering: .releasing)
        return true
    }

    /// Producer: copies `frames` interleaved frames; false, and nothing written, when they do
    /// not all fit.
    public func write(interleaved source: UnsafePointer<Float>, frames: Int) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t - head.load(ordering: .acquiring) + frames <= capacityFrames else { return false }
        let start = t % capacityFrames
        let first = min(frames, capacityFrames - start)
        (storage + start * channels).update(from: source, count: first * channels)
        if frames > first { storage.update(from: source + first * channels, count: (frames - first) * channels) }
        tail.store(t + frames, ordering: .releasing)
        return true
    }

    /// Frames there is room for now (exact on the producer side).
    public var freeFrames: Int { capacityFrames - availableFrames }

    /// Consumer: copies up to `maxFrames` frames into per-channel buffers `channel(c)`; returns
    /// how many it copied.
    @inline(__always)
    public func read(maxFrames: Int, channel: (Int) -> UnsafeMutablePointer<Float>) -> Int {
        let h = head.load(ordering: .relaxed)
        let frames = min(maxFrames, tail.load(ordering: .acquiring) - h)
        guard frames > 0 else { return 0 }
        let start = h % capacityFrames
        for c in 0..<channels {
            let destination = channel(c)
            var index = start
            for i in 0..<frames {
                destination[i] = storage[index * channels + c]
                index += 1
                if index == capacityFrames { index = 0 }
            }
        }
        head.store(h + frames, ordering: .releasing)
        return frames
    }

    /// Consumer: copies up to `maxFrames` frames, interleaved, into `destination`; returns how
    /// many it copied.
    public func read(into destination: UnsafeMutablePointer<Float>, maxFrames: Int) -> Int {
        let h = head.load(ordering: .relaxed)
        let frames = min(maxFrames, tail.load(ordering: .acquiring) - h)
        guard frames > 0 else { return 0 }
        let start = h % capacityFrames
        let first = min(frames, capacityFrames - start)
        (destination).update(from: storage + start * channels, count: first * channels)
        if frames > first {
            (destination + first * channels).update(from: storage, count: (frames - first) * channels)
        }
        head.store(h + frames, ordering: .releasing)
        return frames
    }
}
