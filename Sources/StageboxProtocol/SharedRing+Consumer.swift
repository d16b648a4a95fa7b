import Atomics

extension SharedRing {
    /// Consumer: the read and write positions, checked against what this side knows. Nil when
    /// the ring is faulted (it is then marked) or the producer kept dropping frames meanwhile.
    @inline(__always)
    func checkedPositions() -> (read: UInt64, write: UInt64)? {
        guard !isFaulted else { return nil }
        for _ in 0..<4 {
            let r = readPosition.load(ordering: .acquiring)
            let w = writePosition.load(ordering: .acquiring)
            // The producer drops frames by moving the read position: if it moved between the two
            // loads, the pair is not one moment's; look again.
            guard readPosition.load(ordering: .acquiring) == r else { continue }
            if r < consumed { markFault(.readPositionWentBack); return nil }
            if w < lastWriteSeen { markFault(.writePositionWentBack); return nil }
            if r > w { markFault(.readPastWrite); return nil }
            if w - r > UInt64(capacity) { markFault(.moreThanCapacity); return nil }
            if w >= 1 << 62 { markFault(.positionOutOfRange); return nil }
            lastWriteSeen = w
            return (r, w)
        }
        return nil
    }

    /// Frames waiting, checked (0 when faulted).
    public var availableChecked: Int {
        guard let (r, w) = checkedPositions() else { return 0 }
        return Int(w - r)
    }

    /// Consumer: whether the producer has said its stream ends exactly where it has written to.
    public var producerEnded: Bool {
        guard let (_, w) = checkedPositions() else { return false }
        return endPosition.load(ordering: .acquiring) == w &+ 1
    }

    /// Tries to take `frames` frames starting at a checked read position; `copy` moves them out
    /// (from the ring index given) and the read position is advanced. Bounded retries.
    @inline(__always)
    private func take(frames: Int, _ copy: (Int) -> Void) -> Bool {
        guard frames > 0, frames <= capacity else { return false }
        for _ in 0..<3 {
            guard let (r, w) = checkedPositions() else { return false }
            guard w - r >= UInt64(frames) else { return false }
            copy(Int(r % UInt64(capacity)))
            // If the producer dropped frames under us, what we copied may be torn: try again.
            if readPosition.compareExchange(expected: r, desired: r + UInt64(frames),
                                            ordering: .acquiringAndReleasing).exchanged {
                consumed = r + UInt64(frames)
                return true
            }
        }
        return false
    }

    /// Reads exactly `frames` interleaved frames into `destination`, or returns false (and
    /// reads nothing) when fewer are waiting or the ring is faulted. Real-time safe.
    public func read(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Bool {
        take(frames: frames) { start in
            let first = min(frames, capacity - start)
            destination.update(from: data + start * channels, count: first * channels)
            if first < frames { (destination + first * channels).update(from: data, count: (frames - first) * channels) }
        }
    }

    /// Reads exactly `frames` frames into planar channels, or returns false when fewer are waiting.
    public func read(planar channel: (Int) -> UnsafeMutablePointer<Float>, frames: Int) -> Bool {
        take(frames: frames) { start in
            for c in 0..<channels {
                let dst = channel(c)
                var index = start
                for i in 0..<frames {
                    dst[i] = data[index * channels + c]
                    index += 1
                    if index == capacity { index = 0 }
                }
            }
        }
    }

    /// The timestamp of the newest block at or before ring position `position`, if still kept.
    /// Slots are read as they stand; a slot the producer is rewriting may be skipped.
    public func timestamp(atOrBefore position: UInt64) -> Timestamp? {
        let written = timestampWrites.load(ordering: .acquiring)
        let slots = UInt64(RingLayout.timestampSlots)
        for k in 0..<min(written, slots) {
            let index = written &- 1 &- k
            let slot = Int(index % slots)
            let p = base + RingLayout.timestamps + slot * RingLayout.timestampSize
            let t = Timestamp(ringPosition: p.load(as: UInt64.self), codecFrame: p.load(fromByteOffset: 8, as: Int64.self),
                              hostNanos: p.load(fromByteOffset: 16, as: Int64.self))
            // The producer may have come round to this slot again while it was read: then it (and
            // every older one) may be torn. Load-load: the slot is read before the count.
            atomicMemoryFence(ordering: .acquiring)
            if timestampWrites.load(ordering: .relaxed) &- index >= slots { return nil }
            if t.ringPosition <= position { return t }
        }
        return nil
    }
}
