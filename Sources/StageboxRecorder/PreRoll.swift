/// The last `frames` frames of a source between takes, for a take's pre-roll: a circular
/// buffer on the writer thread.
struct PreRoll {
    let channels: Int
    private var samples: [Float]
    private let capacity: Int
    private var start = 0
    private(set) var frames = 0

    init(channels: Int, frames capacity: Int) {
        self.channels = channels
        self.capacity = capacity
        samples = [Float](repeating: 0, count: channels * capacity)
    }

    /// Keeps the newest frames of `p`, dropping the oldest the buffer cannot hold.
    mutating func append(_ p: UnsafePointer<Float>, frames n: Int) {
        let skip = max(0, n - capacity)
        for i in skip..<n {
            let slot = (start + frames) % capacity
            for c in 0..<channels { samples[slot * channels + c] = p[i * channels + c] }
            if frames < capacity { frames += 1 } else { start = (start + 1) % capacity }
        }
    }

    /// Hands the frames over oldest first and empties the buffer.
    mutating func drain(_ sink: (UnsafePointer<Float>, Int) -> Void) {
        let first = min(frames, capacity - start)
        samples.withUnsafeBufferPointer { b in
            if first > 0 { sink(b.baseAddress! + start * channels, first) }
            if frames > first { sink(b.baseAddress!, frames - first) }
        }
        start = 0
        frames = 0
    }
}
