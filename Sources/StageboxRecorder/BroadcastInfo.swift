#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What goes in a take's `bext` chunk (EBU Tech 3285, version 1): who made it, when, and the
/// time reference that places its first sample on the day's timeline.
public struct BroadcastInfo: Sendable, Equatable {
    public var description: String
    public var originatorReference: String
    /// `yyyy-mm-dd` and `hh:mm:ss`, local time of the first sample.
    public var date: String
    public var time: String
    /// The first sample's position in samples since local midnight.
    public var timeReference: UInt64
    /// The iXML chunk that goes beside `bext` in the header (the slate: scene, take, note).
    public var ixml: IXML?

    public init(description: String, originatorReference: String, date: String, time: String, timeReference: UInt64,
                ixml: IXML? = nil) {
        self.description = description
        self.originatorReference = originatorReference
        self.date = date
        self.time = time
        self.timeReference = timeReference
        self.ixml = ixml
    }

    /// The same take's information for a file that starts `frames` later (a take's next part):
    /// time reference, date and time moved on, midnight crossed when it is.
    func startingLater(by frames: UInt64, sampleRate: Int) -> BroadcastInfo {
        var later = self
        later.timeReference = timeReference + frames
        later.ixml?.timeReference = later.timeReference
        let parts = date.split(separator: "-").compactMap { Int($0) }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 3, clock.count == 3, sampleRate > 0 else { return later }
        var start = tm()
        start.tm_year = Int32(parts[0] - 1900)
        start.tm_mon = Int32(parts[1] - 1)
        start.tm_mday = Int32(parts[2])
        start.tm_hour = Int32(clock[0])
        start.tm_min = Int32(clock[1])
        start.tm_sec = Int32(clock[2])
        // timegm/gmtime_r as a calendar only: the date and time are local, no zone is applied.
        var moved = time_t(timegm(&start)) + time_t(frames / UInt64(sampleRate))
        var out = tm()
        guard gmtime_r(&moved, &out) != nil else { return later }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        later.date = "\(out.tm_year + 1900)-\(two(out.tm_mon + 1))-\(two(out.tm_mday))"
        later.time = "\(two(out.tm_hour)):\(two(out.tm_min)):\(two(out.tm_sec))"
        return later
    }

    func chunkBody(format: TakeFormat) -> [UInt8] {
        var b = LittleEndianBytes()
        b.text(description, width: 256)
        b.text("Stagebox", width: 32)
        b.text(originatorReference, width: 32)
        b.text(date, width: 10)
        b.text(time, width: 8)
        b.u32(UInt32(truncatingIfNeeded: timeReference)); b.u32(UInt32(truncatingIfNeeded: timeReference >> 32))
        b.u16(1) // version
        b.zeros(64 + 190) // UMID, reserved
        let mode = format.channels == 1 ? "mono" : format.channels == 2 ? "stereo" : "multichannel"
        let bits = format.encoding == .float32 ? "32F" : String(format.bytesPerSample * 8)
        var history = Array("A=PCM,F=\(format.sampleRate),W=\(bits),M=\(mode),T=Stagebox\r\n".utf8)
        if history.count % 2 == 1 { history.append(0) }
        b.bytes.append(contentsOf: history)
        return b.bytes
    }
}
