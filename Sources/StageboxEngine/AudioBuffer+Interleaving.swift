extension AudioBuffer {
    /// Writes the first `frames` frames, channel after channel in each frame, to `block`
    /// (which holds `frames × channels` samples): what files and devices take.
    @inline(__always)
    public func interleave(frames: Int, into block: UnsafeMutablePointer<Float>) {
        let n = channels
        for c in 0..<n {
            let src = channel(c)
            for i in 0..<frames { block[i * n + c] = src[i] }
        }
    }

    /// Reads `frames` interleaved frames from `block` into the first frames of every channel,
    /// and silences the rest up to `padTo` frames (a short last block of a file).
    @inline(__always)
    public func deinterleave(from block: UnsafePointer<Float>, frames: Int, padTo: Int = 0) {
        let n = channels
        for c in 0..<n {
            let dst = channel(c)
            for i in 0..<frames { dst[i] = block[i * n + c] }
            if padTo > frames { (dst + frames).update(repeating: 0, count: padTo - frames) }
        }
    }
}
