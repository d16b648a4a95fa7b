import Atomics

extension SharedRing {
    // MARK: Words the client sets for the server

    /// How many frames the consumer waits for before it starts (and after an underrun, starts
    /// again): the producer's cushion against its own jitter. The producer sets it; 0 = at once.
    /// Read back as at most half the ring, whatever the header holds.
    public var startThreshold: Int {
        get { Int(min(startThresholdFrames.load(ordering: .relaxed), UInt64(capacity / 2))) }
        set { startThresholdFrames.store(UInt64(max(0, min(newValue, capacity / 2))), ordering: .relaxed) }
    }

    /// The resampling ratio the client applies, for reports: nil when the header holds
    /// something that is not a ratio (not finite, not positive, or absurd).
    public var ratio: Double? {
        get {
            let b = ratioBits.load(ordering: .relaxed)
            if b == 0 { return 1 }
            let r = Double(bitPattern: b)
            return r.isFinite && r > 0 && r < 1000 ? r : nil
        }
        set { ratioBits.store((newValue ?? 1).bitPattern, ordering: .relaxed) }
    }

    /// The fill level the client's drift correction holds, for reports (at most the capacity).
    public var targetFill: Int {
        get { Int(min(targetFillFrames.load(ordering: .relaxed), UInt64(capacity))) }
        set { targetFillFrames.store(UInt64(max(0, min(newValue, capacity))), ordering: .relaxed) }
    }

    // MARK: When a waiting consumer wants its wakeup

    /// Consumer: while it waits, asks to be woken only once `frames` frames wait, not after
    /// every write (0, the default, is every write). A program that takes 20 ms at a time then
    /// wakes every 20 ms, not every period. Set before checking the ring and sleeping; set 0
    /// again when done waiting, for whoever polls the wakeup descriptor directly.
    public func setWakeThreshold(_ frames: Int) {
        wakeThresholdFrames.store(UInt64(max(0, frames)), ordering: .relaxed)
        // The threshold is visible before this side reads the write position (store-load),
        // the mirror of the fence in `consumerWantsWakeup`: of a producer that wrote and a
        // consumer about to sleep, at least one sees the other's store, so no wakeup is lost.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }

    /// Producer, after a write: whether the consumer wants its wakeup now. The threshold is
    /// read as at most half the ring, whatever the header holds, so a consumer is always woken
    /// before the ring overflows. The frames waiting are counted from the last read position
    /// this side saw, which may only overstate them: an early wakeup, never a lost one.
    @inline(__always)
    public var consumerWantsWakeup: Bool {
        atomicMemoryFence(ordering: .sequentiallyConsistent) // the write position before the threshold
        let wanted = min(wakeThresholdFrames.load(ordering: .relaxed), UInt64(capacity / 2))
        return produced &- lastReadSeen >= wanted
    }

    // MARK: The codec clock, which the server sets every period

    /// Server: where the period being processed sits on the codec clock (a seqlock).
    @inline(__always)
    public func setClock(codecFrame: Int64, hostNanos: Int64) {
        clockGeneration.wrappingIncrement(ordering: .relaxed)
        // The odd generation is visible before any word of the new value (store-store).
        atomicMemoryFence(ordering: .releasing)
        clockFrame.store(UInt64(bitPattern: codecFrame), ordering: .relaxed)
        clockNanos.store(UInt64(bitPattern: hostNanos), ordering: .relaxed)
        clockGeneration.wrappingIncrement(ordering: .releasing)
    }

    /// Client: the codec frame and monotonic time of the newest period, read consistently, or
    /// nil while none has been set or the writer keeps rewriting it.
    public func clock() -> (codecFrame: Int64, hostNanos: Int64)? {
        for _ in 0..<8 {
            let before = clockGeneration.load(ordering: .acquiring)
            if before == 0 { return nil }
            if before % 2 == 1 { continue }
            let frame = Int64(bitPattern: clockFrame.load(ordering: .relaxed))
            let nanos = Int64(bitPattern: clockNanos.load(ordering: .relaxed))
            // The two loads above are done before the generation is looked at again (load-load).
            atomicMemoryFence(ordering: .acquiring)
            if clockGeneration.load(ordering: .relaxed) == before { return (frame, nanos) }
        }
        return nil
    }

    // MARK: Sources of a separate-streams receiver

    /// How many sources a separate-streams ring carries side by side.
    public static let sourceSlots = RingLayout.sourceSlots

    /// Server: names the sources in their slots (a seqlock: the generation is odd while the
    /// table is being written).
    public func setSourceNames(_ names: [String]) {
        namesGeneration.wrappingIncrement(ordering: .relaxed)
        // The odd generation is visible before any byte of the new table (store-store).
        atomicMemoryFence(ordering: .releasing)
        for slot in 0..<Self.sourceSlots {
            let p = base + RingLayout.names + slot * RingLayout.nameSize
            let bytes = slot < names.count ? Array(names[slot].utf8.prefix(RingLayout.nameSize - 1)) : []
            for (i, b) in bytes.enumerated() { p.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
            p.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        }
        namesGeneration.wrappingIncrement(ordering: .releasing)
    }

    /// Client: the source in each slot (empty: none), read consistently. Bytes that are not a
    /// port name's (letters, digits, `.`, `_`, `-`) make the slot empty; after a bounded number
    /// of tries at a table that keeps changing, every slot reads empty.
    public func sourceNames() -> [String] {
        for _ in 0..<64 {
            let before = namesGeneration.load(ordering: .acquiring)
            if before % 2 == 1 { continue }
            var names: [String] = []
            for slot in 0..<Self.sourceSlots {
                let p = (base + RingLayout.names + slot * RingLayout.nameSize).assumingMemoryBound(to: UInt8.self)
                var n = 0
                while n < RingLayout.nameSize - 1 && p[n] != 0 { n += 1 }
                let bytes = UnsafeBufferPointer(start: p, count: n)
                let valid = bytes.allSatisfy { PortNameRules.isNameByte($0) }
                names.append(valid ? String(decoding: bytes, as: UTF8.self) : "")
            }
            // The table's bytes are read before the generation is looked at again (load-load).
            atomicMemoryFence(ordering: .acquiring)
            if namesGeneration.load(ordering: .relaxed) == before { return names }
        }
        return Array(repeating: "", count: Self.sourceSlots)
    }
}

/// What a port name may be made of, for checks that have no engine at hand.
public enum PortNameRules {
    @inline(__always)
    public static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
    }
}
