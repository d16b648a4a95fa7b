import Atomics

/// How the cycle times are spread, for the median and the 99th percentile: counts in buckets
/// 1/16 of an octave wide (each about 4 % of its value), from 16 ns to over a second. The audio
/// thread adds one count per period without allocating or locking; others read.
public final class CycleHistogram: @unchecked Sendable {
    // @unchecked: the buckets are atomics in memory allocated once, freed in deinit.
    static let subBuckets = 16
    static let bucketCount = 31 * subBuckets
    private let storage: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>

    public init() {
        storage = .allocate(capacity: Self.bucketCount)
        storage.initialize(repeating: UnsafeAtomic<Int>.Storage(0), count: Self.bucketCount)
    }

    deinit {
        storage.deinitialize(count: Self.bucketCount)
        storage.deallocate()
    }

    private func bucket(_ index: Int) -> UnsafeAtomic<Int> { UnsafeAtomic(at: storage + index) }

    /// The bucket of `nanos`: its octave (the highest bit set) and the next four bits.
    static func index(_ nanos: Int) -> Int {
        guard nanos >= subBuckets else { return max(0, nanos) }
        let octave = Int.bitWidth - 1 - nanos.leadingZeroBitCount
        let fraction = (nanos >> (octave - 4)) & (subBuckets - 1)
        return min(bucketCount - 1, (octave - 3) * subBuckets + fraction)
    }

    /// The middle of bucket `index`, in nanoseconds.
    static func middle(_ index: Int) -> Int {
        guard index >= subBuckets else { return index }
        let octave = index / subBuckets + 3
        let fraction = index % subBuckets
        let low = (subBuckets + fraction) << (octave - 4)
        let width = 1 << (octave - 4)
        return low + width / 2
    }

    /// Audio side: counts one cycle of `nanos`.
    @inline(__always)
    public func record(nanos: Int) {
        bucket(Self.index(nanos)).wrappingIncrement(ordering: .relaxed)
    }

    /// The cycle time below which `fraction` of the cycles counted fall (the middle of its
    /// bucket), or 0 with none counted.
    public func percentile(_ fraction: Double) -> Int {
        var counts = [Int](repeating: 0, count: Self.bucketCount)
        for i in 0..<Self.bucketCount { counts[i] = bucket(i).load(ordering: .relaxed) }
        let total = counts.reduce(0, +)
        guard total > 0 else { return 0 }
        let wanted = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for i in 0..<Self.bucketCount {
            seen += counts[i]
            if seen >= wanted { return Self.middle(i) }
        }
        return Self.middle(Self.bucketCount - 1)
    }

    /// Any thread: forgets every count.
    public func reset() {
        for i in 0..<Self.bucketCount { bucket(i).store(0, ordering: .relaxed) }
    }
}
