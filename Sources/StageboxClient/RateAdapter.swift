import CSampleRate

/// Converts between a client's sample rate and the bus's with libsamplerate, and keeps a ring's
/// fill level steady against a client clock that drifts, by nudging the conversion ratio (the
/// way alsaloop does).
///
/// libsamplerate is used because it is built for a ratio that changes from call to call without
/// clicks; `SRC_SINC_FASTEST` keeps it cheap. At equal rates the adapter passes samples through
/// untouched, bit for bit, until the fill level shows drift; from then on it resamples.
final class RateAdapter {
    let channels: Int
    /// Output frames per input frame at nominal clocks.
    let nominalRatio: Double
    /// How far the fill level may wander (bus frames) before drift is corrected.
    let band: Double
    private(set) var ratio: Double
    private(set) var engaged: Bool
    private var state: OpaquePointer?
    /// The fill level to hold: what it was while the client settled in.
    private var target = 0.0
    private var smoothedFill = 0.0
    private var integral = 0.0
    private var observations = 0
    private static let learning = 200

    init(channels: Int, nominalRatio: Double, band: Double) {
        self.channels = channels
        self.nominalRatio = nominalRatio
        self.band = band
        ratio = nominalRatio
        engaged = nominalRatio != 1
        if engaged { makeState() }
    }

    deinit { if let state { src_delete(state) } }

    /// How far a port's fill may wander before drift is corrected: four periods or 10 ms.
    static func band(period: Int, busRate: Int) -> Double { Double(max(4 * period, busRate / 100)) }

    private func makeState() {
        var error: Int32 = 0
        state = src_new(Int32(SRC_SINC_FASTEST), Int32(channels), &error)
    }

    /// Tells the controller the ring's fill level (bus frames) as seen after a write (sender)
    /// or before a read (receiver).
    ///
    /// The first observations learn the level the client settles at; a client paced by the bus
    /// stays there. A client on a clock of its own drifts away from it steadily: once it has
    /// wandered by more than `band`, a PI controller nudges the ratio to bring it back (too
    /// full: fewer bus frames per client frame on the way in, more taken on the way out).
    func observe(fill: Int) {
        observations += 1
        let f = Double(fill)
        if observations <= Self.learning {
            target += (f - target) / Double(observations)
            smoothedFill = target
            return
        }
        smoothedFill += (f - smoothedFill) * 0.1
        let error = (smoothedFill - target) / band
        if !engaged {
            guard abs(error) > 1 else { return }
            engaged = true
            makeState()
        }
        integral = max(-0.02, min(0.02, integral + error * 0.00002))
        let correction = max(-0.02, min(0.02, 0.003 * error + integral))
        ratio = nominalRatio * (1 - correction)
    }

    /// Converts `frames` interleaved input frames; calls `emit` with the output. `output` must
    /// have room for `maxOutput(for:)` frames.
    func convert(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>,
                 capacity: Int) -> Int {
        guard engaged, let state else {
            let n = min(frames, capacity)
            output.update(from: input, count: n * channels)
            return n
        }
        var data = SRC_DATA()
        data.data_in = input
        data.input_frames = Int(frames)
        data.data_out = output
        data.output_frames = Int(capacity)
        data.src_ratio = ratio
        data.end_of_input = 0
        src_process(state, &data)
        return Int(data.output_frames_gen)
    }

    /// Output frames `frames` input frames can give at most.
    func maxOutput(for frames: Int) -> Int { Int((Double(frames) * nominalRatio * 1.02).rounded(.up)) + 16 }
}
