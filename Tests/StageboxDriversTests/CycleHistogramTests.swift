import Testing
@testable import StageboxDrivers

@Suite struct CycleHistogramTests {
    @Test func everyTimeFallsInABucketWhoseMiddleIsWithinFourPercent() {
        var nanos = 16
        while nanos < 1_000_000_000 {
            let middle = CycleHistogram.middle(CycleHistogram.index(nanos))
            #expect(abs(Double(middle - nanos)) <= Double(nanos) * 0.04, "\(nanos) ns → \(middle) ns")
            nanos = nanos * 9 / 8 + 1
        }
        #expect(CycleHistogram.index(0) == 0)
        #expect(CycleHistogram.index(-5) == 0)
        #expect(CycleHistogram.index(Int.max) == CycleHistogram.bucketCount - 1)
    }

    @Test func percentilesOfAKnownSpread() {
        let h = CycleHistogram()
        #expect(h.percentile(0.5) == 0)
        // 98 cycles of 4 µs, one of 50 µs, one of 2 ms: the median is 4 µs, p99 50 µs.
        for _ in 0..<98 { h.record(nanos: 4000) }
        h.record(nanos: 50_000)
        h.record(nanos: 2_000_000)
        #expect(abs(h.percentile(0.5) - 4000) <= 160)
        #expect(abs(h.percentile(0.99) - 50_000) <= 2000)
        #expect(abs(h.percentile(1.0) - 2_000_000) <= 80_000)
        h.reset()
        #expect(h.percentile(0.99) == 0)
    }

    @Test func statisticsCarryTheMedianAndP99AndResetThem() {
        let stats = AudioStatistics()
        for n in 1...100 { stats.recordCycle(nanos: n * 1000) }
        let snap = stats.snapshot()
        #expect(abs(snap.medianCycleNanos - 50_000) <= 2000)
        #expect(abs(snap.p99CycleNanos - 99_000) <= 4000)
        stats.reset()
        #expect(stats.snapshot().p99CycleNanos == 0)
    }
}
