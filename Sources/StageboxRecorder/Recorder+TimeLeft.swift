extension Recorder {
    /// The bytes a second a take writes: every source on the bus (a sender or filter) at its
    /// channel count, at the configured rate and encoding. Sources not on the bus write nothing.
    public var bytesPerSecond: Int {
        let channels = Dictionary(engine.ports.filter { $0.kind != .receiver }.map { ($0.name, $0.channels) },
                                  uniquingKeysWith: { a, _ in a })
        return settings.sources.compactMap { channels[$0] }.reduce(0) { total, count in
            total + TakeFormat(sampleRate: settings.sampleRate, channels: count, encoding: settings.encoding).bytesPerFrame
                * settings.sampleRate
        }
    }

    /// The recording time left on the takes' medium, from the free space the writer last saw
    /// (nil before it looked, or with no source on the bus).
    public var timeLeft: RecordTimeLeft? {
        guard let free = status.freeBytes else { return nil }
        return RecordTimeLeft(freeBytes: free, reserveBytes: settings.minFreeBytes, bytesPerSecond: bytesPerSecond)
    }

    /// The takes' medium as it is now, and the time left on it.
    public func medium() -> (medium: Medium, timeLeft: RecordTimeLeft?)? {
        guard let medium = Medium(path: settings.directory) else { return nil }
        return (medium, RecordTimeLeft(freeBytes: medium.freeBytes, reserveBytes: settings.minFreeBytes,
                                       bytesPerSecond: bytesPerSecond))
    }
}

extension Recorder {
    /// How full the fullest tap's ring is, 0 to 1 (a disk falling behind shows here before a
    /// frame is lost); nil with no tap on the bus.
    public var ringFill: Double? {
        taps.withLock { taps in
            taps.values.map { Double($0.ring.availableFrames) / Double($0.ring.capacityFrames) }.max()
        }
    }
}
