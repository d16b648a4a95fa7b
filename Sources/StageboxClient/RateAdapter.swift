import CSampleRate

/// Converts between a client's sample rate and the bus's with libsamplerate.
///
/// libsamplerate is used because it is built for a ratio that changes from call to call without
/// clicks; `SRC_SINC_FASTEST` keeps it cheap. While not engaged (equal rates, no drift measured)
/// samples pass untouched, bit for bit.
final class RateAdapter {
    let channels: Int
    /// Output frames per input frame at nominal clocks.
    let nominalRatio: Double
    /// The ratio in use.
    var ratio: Double
    private(set) var engaged: Bool
    private var state: OpaquePointer?
    /// The converter was flushed (the end of a stream); new input starts it afresh.
    private var flushed = false

    init(channels: Int, nominalRatio: Double) {
        self.channels = channels
        self.nominalRatio = nominalRatio
        ratio = nominalRatio
        engaged = false
        if nominalRatio != 1 { engage() }
    }

    deinit { if let state { src_delete(state) } }

    /// From now on, convert (once engaged it stays engaged: switching back would click).
    func engage() {
        guard !engaged else { return }
        var error: Int32 = 0
        state = src_new(Int32(SRC_SINC_FASTEST), Int32(channels), &error)
        engaged = state != nil
    }

    /// Converts `frames` interleaved input frames into `output` (room for `capacity` frames);
    /// returns the frames produced. With `endOfInput`, also flushes what the filter holds back.
    func convert(_ input: UnsafePointer<Float>?, frames: Int, into output: UnsafeMutablePointer<Float>,
                 capacity: Int, endOfInput: Bool = false) -> (used: Int, produced: Int) {
        guard engaged, let state else {
            let n = min(frames, capacity)
            if let input, n > 0 { output.update(from: input, count: n * channels) }
            return (n, n)
        }
        if flushed && !endOfInput {
            src_reset(state)
            flushed = false
        }
        if endOfInput { flushed = true }
        var data = SRC_DATA()
        data.data_in = input
        data.input_frames = frames
        data.data_out = output
        data.output_frames = capacity
        data.src_ratio = ratio
        data.end_of_input = endOfInput ? 1 : 0
        guard src_process(state, &data) == 0 else { return (frames, 0) }
        return (data.input_frames_used, data.output_frames_gen)
    }
}
