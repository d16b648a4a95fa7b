/// Measures a client's clock against the codec's: how many client frames (in bus units) go by
/// per codec frame. It is open loop: it counts the frames the program itself sends or asks for
/// against the codec clock the server stamps into the ring every period, so nothing the rate
/// adapter does can feed back into it, and nothing about the ring's fill level enters it.
///
/// Observations are averaged into buckets of `bucketFrames` codec frames; the slope is a least
/// squares fit over the last `maxBuckets` bucket means, with its standard error. Allocation-free
/// after init.
struct ClockDriftEstimator {
    let bucketFrames: Double
    let maxBuckets: Int
    private var xs: [Double]
    private var ys: [Double]
    private var stored = 0
    private var next = 0
    private var origin: (x: Double, y: Double)?
    private var bucketStart = 0.0
    private var sumX = 0.0, sumY = 0.0, count = 0.0

    /// A bucket this far (client frames) off the line the earlier ones make is a step in the
    /// program's stream (it stalled and lost time, or skipped ahead): measuring starts over.
    let stepFrames: Double

    init(bucketFrames: Double, stepFrames: Double, maxBuckets: Int = 240) {
        self.bucketFrames = bucketFrames
        self.stepFrames = stepFrames
        self.maxBuckets = maxBuckets
        xs = [Double](repeating: 0, count: maxBuckets)
        ys = [Double](repeating: 0, count: maxBuckets)
    }

    /// Forgets everything (after a gap in the program's stream, or a codec clock that jumped).
    mutating func reset() {
        stored = 0
        next = 0
        origin = nil
        sumX = 0; sumY = 0; count = 0
    }

    /// One observation: the codec position `x` and the client's position `y` (bus units) at the
    /// same moment.
    mutating func observe(codec x: Double, client y: Double) {
        guard x.isFinite, y.isFinite else { return }
        guard let o = origin else {
            origin = (x, y)
            bucketStart = x
            return
        }
        let dx = x - o.x, dy = y - o.y
        if x < bucketStart - bucketFrames { return reset() } // the codec clock went back
        sumX += dx; sumY += dy; count += 1
        if x - bucketStart >= bucketFrames {
            let mx = sumX / count, my = sumY / count
            if let fit = line, abs(my - (fit.intercept + fit.slope * mx)) > stepFrames {
                reset()
                origin = (x, y)
                bucketStart = x
                return
            }
            xs[next] = mx
            ys[next] = my
            next = (next + 1) % maxBuckets
            stored = min(stored + 1, maxBuckets)
            sumX = 0; sumY = 0; count = 0
            bucketStart = x
        }
    }

    /// Codec frames the stored buckets span.
    var span: Double {
        guard stored >= 2 else { return 0 }
        let newest = xs[(next - 1 + maxBuckets) % maxBuckets]
        let oldest = xs[stored < maxBuckets ? 0 : next]
        return newest - oldest
    }

    /// Client frames per codec frame, and the standard error of that figure; nil with fewer
    /// than four buckets.
    var estimate: (slope: Double, standardError: Double)? {
        fit.map { ($0.slope, $0.standardError) }
    }

    private var line: (slope: Double, intercept: Double)? { fit.map { ($0.slope, $0.intercept) } }

    private var fit: (slope: Double, intercept: Double, standardError: Double)? {
        guard stored >= 4 else { return nil }
        var mx = 0.0, my = 0.0
        for i in 0..<stored { mx += xs[i]; my += ys[i] }
        mx /= Double(stored); my /= Double(stored)
        var sxx = 0.0, sxy = 0.0
        for i in 0..<stored {
            let dx = xs[i] - mx
            sxx += dx * dx
            sxy += dx * (ys[i] - my)
        }
        guard sxx > 0 else { return nil }
        let slope = sxy / sxx
        var residuals = 0.0
        for i in 0..<stored {
            let r = ys[i] - my - slope * (xs[i] - mx)
            residuals += r * r
        }
        let se = (residuals / Double(stored - 2) / sxx).squareRoot()
        return (slope, my - slope * mx, se)
    }
}
