import Atomics

extension SharedRing {
    /// Producer: the write position after making room for `n` frames (dropping the oldest when
    /// full), or nil when the ring is faulted or the consumer keeps moving under us.
    @inline(__always)
    private func makeRoom(for n: Int) -> UInt64? {
        guard !isFaulted else { return nil }
        let w = produced
        // Bounded: each failed exchange means the consumer moved on, which can only make room.
        for _ in 0..<4 {
            let r = readPosition.load(ordering: .acquiring)
            if r < lastReadSeen { markFault(.readPositionWentBack); return nil }
            if r > w { markFault(.readPastWrite); return nil }
            lastReadSeen = r
            if w - r + UInt64(n) <= UInt64(capacity) { return w }
            let newRead = w + UInt64(n) - UInt64(capacity)
            if readPosition.compareExchange(expected: r, desired: newRead, ordering: .acquiringAndReleasing).exchanged {
                overrunCount.wrappingIncrement(ordering: .relaxed)
                lastReadSeen = newRead
                return w
            }
        }
        overrunCount.wrappingIncrement(ordering: .relaxed)
        return nil
    }

    @inline(__always)
    private func publish(from w: UInt64, frames n: Int, timestamp: Timestamp?) {
        if let t = timestamp { record(Timestamp(ringPosition: w, codecFrame: t.codecFrame, hostNanos: t.hostNanos)) }
        produced = w + UInt64(n)
        writePosition.store(produced, ordering: .releasing)
    }

    /// Writes `frames` interleaved frames. When the ring has no room, the oldest frames are
    /// dropped to make it, and an overrun is counted. Real-time safe.
    public func write(_ source: UnsafePointer<Float>, frames: Int, timestamp: Timestamp? = nil) {
        let n = min(max(frames, 0), capacity)
        guard n > 0, let w = makeRoom(for: n) else { return }
        let skipped = source + (frames - n) * channels
        let start = Int(w % UInt64(capacity))
        let first = min(n, capacity - start)
        (data + start * channels).update(from: skipped, count: first * channels)
        if first < n { data.update(from: skipped + first * channels, count: (n - first) * channels) }
        publish(from: w, frames: n, timestamp: timestamp)
    }

    /// Writes `frames` frames from planar channels (`channel(c)` gives channel c's samples).
    public func write(planar channel: (Int) -> UnsafePointer<Float>, frames: Int, timestamp: Timestamp? = nil) {
        let n = min(max(frames, 0), capacity)
        guard n > 0, let w = makeRoom(for: n) else { return }
        let start = Int(w % UInt64(capacity))
        for c in 0..<channels {
            let src = channel(c)
            var index = start
            for i in 0..<n {
                data[index * channels + c] = src[i]
                index += 1
                if index == capacity { index = 0 }
            }
        }
        publish(from: w, frames: n, timestamp: timestamp)
    }

    private func record(_ t: Timestamp) {
        let slot = Int(stampsWritten % UInt64(RingLayout.timestampSlots))
        let p = base + RingLayout.timestamps + slot * RingLayout.timestampSize
        // A reader that sees a word of this slot's new value also sees the count that says the
        // slot is being rewritten (`timestamp(atOrBefore:)` checks it): store-store.
        atomicMemoryFence(ordering: .releasing)
        p.storeBytes(of: t.ringPosition, as: UInt64.self)
        p.storeBytes(of: t.codecFrame, toByteOffset: 8, as: Int64.self)
        p.storeBytes(of: t.hostNanos, toByteOffset: 16, as: Int64.self)
        stampsWritten &+= 1
        timestampWrites.store(stampsWritten, ordering: .releasing)
    }

    /// Producer: the stream ends with what has been written so far; the consumer may take the
    /// last partial period (padded with silence). Writing again cancels it.
    public func markEndOfStream() { endPosition.store(produced &+ 1, ordering: .releasing) }

    /// Producer: everything written has been taken (the consumer's position reached ours).
    public var isDrained: Bool { readPosition.load(ordering: .acquiring) >= produced }
}
