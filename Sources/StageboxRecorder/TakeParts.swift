import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A take's file on a medium that limits a file's size (FAT32: 4 GiB less one byte), as field
/// recorders write one: before a file would pass the limit, the take goes on in a new part, at
/// a whole frame, so that the parts joined are the take, no frame lost or repeated. The parts
/// are `NAME.wav`, `NAME_part002.wav`, `NAME_part003.wav`, …, which sort in order. Each part is
/// a whole WAV of its own whose `bext` and iXML time reference is its own first sample's.
/// Without a limit it is one `TakeFile`.
public final class TakeParts {
    public let format: TakeFormat
    /// The largest a part may grow, in bytes (nil: no limit).
    public let limit: UInt64?
    private let basePath: String
    private let bext: BroadcastInfo
    private let rf64Threshold: UInt64
    private var current: TakeFile
    /// Frames in the parts before the current one.
    private var framesBefore: Int64 = 0
    private var bytesBefore: UInt64 = 0
    /// Cue points at frames not written yet: each goes into the part that holds its frame.
    private var pendingCues: [(frame: Int64, label: String)] = []
    private var cuesPlaced = 0
    /// Cue points a part's header had no room for (100 a file).
    public private(set) var cuesRefused = 0
    public private(set) var paths: [String]

    /// Creates the first part (see `TakeFile.init`). `limit`: the medium's largest file
    /// (`TakeParts.limit(forFilesystem:)`); a part is never larger.
    public init(path: String, format: TakeFormat, bext: BroadcastInfo, rf64Threshold: UInt64 = UInt64(UInt32.max),
                limit: UInt64? = nil) throws(SystemCallError) {
        self.format = format
        self.basePath = path
        self.bext = bext
        self.rf64Threshold = rf64Threshold
        self.limit = limit
        current = try TakeFile(path: path, format: format, bext: bext, rf64Threshold: rf64Threshold)
        paths = [path]
    }

    /// The largest file a filesystem holds, when a take must split before it: FAT (`vfat`)
    /// holds 4 GiB less one byte. `lowered` (tests, `STAGEBOX_SPLIT_THRESHOLD`) lowers it.
    public static func limit(forFilesystem filesystem: String, lowered: UInt64? = nil) -> UInt64? {
        guard filesystem == "vfat" else { return nil }
        return min(UInt64(UInt32.max), lowered ?? .max)
    }

    /// The take's name and the part's number, when `file` is a later part's name
    /// ("T_part002.wav" → ("T.wav", 2)); nil for a take's own name.
    public static func part(of file: String) -> (take: String, number: Int)? {
        guard file.hasSuffix(".wav") else { return nil }
        let stem = file.dropLast(4)
        guard let underscore = stem.lastIndex(of: "_") else { return nil }
        let tail = stem[stem.index(after: underscore)...]
        guard tail.hasPrefix("part") else { return nil }
        let digits = tail.dropFirst(4)
        guard digits.count >= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits), number > 1 else { return nil }
        return (String(stem[..<underscore]) + ".wav", number)
    }

    /// The name of part `number` (1 is the take's own name). Three digits: 999 parts of 4 GiB.
    public static func partPath(_ path: String, number: Int) -> String {
        guard number > 1 else { return path }
        let stem = path.hasSuffix(".wav") ? String(path.dropLast(4)) : path
        let digits = String(number)
        return stem + "_part" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + ".wav"
    }

    /// The first part's path: the take's name.
    public var path: String { basePath }
    /// Frames in every part.
    public var frames: Int64 { framesBefore + current.frames }
    /// Bytes of every part, headers included.
    public var fileBytes: UInt64 { bytesBefore + current.fileBytes }
    public var cueCount: Int { cuesPlaced + pendingCues.count }
    public var isRF64: Bool { current.isRF64 }

    /// Appends interleaved frames, starting a new part wherever the current one is full.
    public func append(_ samples: UnsafePointer<Float>, frames count: Int) throws(SystemCallError) {
        var done = 0
        while done < count {
            var n = count - done
            if let limit {
                // Room for whole frames, and for the pad byte an odd data chunk gets at close.
                let used = current.fileBytes + 1
                let room = used >= limit ? 0 : Int((limit - used) / UInt64(format.bytesPerFrame))
                if room == 0 {
                    // A limit that leaves no room for a frame past a header would make parts forever.
                    if current.frames == 0 { throw SystemCallError("splitting", current.path, errno: .fileTooLarge) }
                    try nextPart()
                    continue
                }
                n = min(n, room)
            }
            try current.append(samples + done * format.channels, frames: n)
            done += n
            placeCues(upTo: frames)
        }
    }

    /// Drops a cue point at take frame `frame` (it goes into the part that holds that frame, or
    /// at the start of the current part when an earlier part is closed already); false when the
    /// part's header has no room for more. One ahead of the written frames waits for its part:
    /// if that part has no room, it counts in `cuesRefused`.
    @discardableResult
    public func addCue(frame: Int64, label: String) -> Bool {
        if frame < framesBefore + current.frames || limit == nil { return place(frame: frame, label: label) }
        pendingCues.append((frame, label))
        return true
    }

    /// See `TakeFile.sync`.
    public func sync() throws(SystemCallError) { try current.sync() }

    /// Closes the last part; cue points still ahead of the written frames go at its end.
    public func close() throws(SystemCallError) {
        for cue in pendingCues { place(frame: min(cue.frame, frames), label: cue.label) }
        pendingCues.removeAll()
        try current.close()
    }

    private func nextPart() throws(SystemCallError) {
        let framesDone = frames
        let bytesDone = fileBytes
        try current.close()
        let partBext = bext.startingLater(by: UInt64(framesDone), sampleRate: format.sampleRate)
        let path = Self.partPath(basePath, number: paths.count + 1)
        current = try TakeFile(path: path, format: format, bext: partBext, rf64Threshold: rf64Threshold)
        framesBefore = framesDone
        bytesBefore = bytesDone
        paths.append(path)
    }

    private func placeCues(upTo written: Int64) {
        guard !pendingCues.isEmpty else { return }
        let due = pendingCues.filter { $0.frame < written }
        pendingCues.removeAll { $0.frame < written }
        for cue in due { place(frame: cue.frame, label: cue.label) }
    }

    @discardableResult
    private func place(frame: Int64, label: String) -> Bool {
        let placed = current.addCue(frame: max(0, frame - framesBefore), label: label)
        if placed { cuesPlaced += 1 } else { cuesRefused += 1 }
        return placed
    }
}
