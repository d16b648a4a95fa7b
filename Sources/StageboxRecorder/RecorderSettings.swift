import StageboxAudioFiles

/// How the recorder records: `[recorder]` of the configuration, and the codec's rate.
public struct RecorderSettings: Sendable {
    public var directory: String
    /// Sender or filter ports; a take is one file for each.
    public var sources: [String]
    public var encoding: AudioFileEncoding
    public var sampleRate: Int
    /// The header is rewritten and the data fdatasync'ed at least this often.
    public var syncIntervalMs: Int
    /// Audio from before the start included in the take.
    public var preRollSeconds: Double
    /// Below this much free space a take is refused, or ends cleanly.
    public var minFreeBytes: UInt64
    /// The audio thread's ring for each source: how long a disk stall it absorbs.
    public var ringSeconds: Double
    /// See `TakeFile.init(rf64Threshold:)`.
    public var rf64Threshold: UInt64
    /// Where each take is copied as it is recorded (see `MirrorTarget`); "" for nowhere.
    public var mirror: String
    /// The slate's fields at start (`[recorder] project`, `scene`, `tape`).
    public var slate = Slate.Fields()
    /// Whether the wall clock can be trusted now (a take made without it says so).
    public var timeTrusted: @Sendable () -> Bool = { true }
    /// Where USB sticks are mounted, for `mirror = "usb"`.
    public var mediaRoot: String
    /// Lowers FAT32's 4 GiB file limit, where takes split (tests: `STAGEBOX_SPLIT_THRESHOLD`).
    public var splitThreshold: UInt64?

    public init(directory: String, sources: [String], encoding: AudioFileEncoding = .pcm24, sampleRate: Int,
                syncIntervalMs: Int = 1000, preRollSeconds: Double = 0, minFreeMB: Int = 64,
                ringSeconds: Double = 5, rf64Threshold: UInt64 = UInt64(UInt32.max), mirror: String = "",
                mediaRoot: String = "/media") {
        self.directory = directory
        self.sources = sources
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.syncIntervalMs = syncIntervalMs
        self.preRollSeconds = preRollSeconds
        self.minFreeBytes = UInt64(minFreeMB) * 1_000_000
        self.ringSeconds = ringSeconds
        self.rf64Threshold = rf64Threshold
        self.mirror = mirror
        self.mediaRoot = mediaRoot
    }

    /// The largest file the medium of `directory` holds (see `TakeParts.limit`).
    func fileSizeLimit(of directory: String) -> UInt64? {
        TakeParts.limit(forFilesystem: Medium(path: directory)?.filesystem ?? "", lowered: splitThreshold)
    }

    var ringFrames: Int { Int(ringSeconds * Double(sampleRate)) }
    var preRollFrames: Int { Int(preRollSeconds * Double(sampleRate)) }
    /// The mirror's ring for each source: twice the takes' own, as a USB stick stalls longer
    /// than an SD card (and holds the longest pre-roll, which arrives at once).
    var mirrorRingSeconds: Double { max(2 * ringSeconds, preRollSeconds + ringSeconds) }
}
