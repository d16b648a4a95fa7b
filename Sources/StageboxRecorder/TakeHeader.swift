/// The header of a take: everything before its samples, kept in memory and written again
/// whole at every sync, so a file cut at any moment has a header at most one sync old.
///
/// Layout (every size fixed when the take starts, so the samples never move):
///
///     RIFF|RF64 size WAVE
///     JUNK|ds64 (28 bytes: room for RF64's 64-bit sizes, EBU Tech 3306)
///     fmt       (16 bytes, or 40 for WAVE_FORMAT_EXTENSIBLE above two channels)
///     bext      (EBU Tech 3285 version 1: date, time, time reference in samples)
///     iXML      (2048 bytes: project, scene, take, tape, note, track names, the time reference)
///     cue region (a fixed number of bytes: `cue ` and `LIST adtl` labels, then JUNK)
///     data
///
/// The markers live before the samples, not after them as usual, so that they survive a power
/// cut with the rest of the header.
struct TakeHeader {
    static let ds64Offset = 12
    static let cueRegionBytes = 8192
    /// The most cue points a take keeps: libsndfile reads no more than 100 (`SF_CUES`).
    static let maxCues = 100

    let format: TakeFormat
    private(set) var bytes: [UInt8]
    let cueRegionOffset: Int
    /// The `fact` chunk's frame count (float takes only).
    let factOffset: Int?
    /// Where the `data` chunk's header is; the samples start 8 bytes later.
    let dataChunkOffset: Int
    var dataOffset: Int { dataChunkOffset + 8 }
    private(set) var isRF64 = false
    private(set) var cues: [Cue] = []

    struct Cue: Equatable {
        var frame: Int64
        var label: String
    }

    init(format: TakeFormat, bext: BroadcastInfo) {
        self.format = format
        var b = LittleEndianBytes()
        b.fourCC("RIFF"); b.u32(0); b.fourCC("WAVE")
        b.fourCC("JUNK"); b.u32(28); b.zeros(28)
        b.fourCC("fmt ")
        let bitsPerSample = UInt16(format.bytesPerSample * 8)
        let tag: UInt16 = format.extensible ? 0xFFFE : format.formatTag
        // Float needs the 18-byte form (cbSize 0) and a `fact` chunk, which PCM does without.
        let isFloat = format.encoding == .float32
        b.u32(format.extensible ? 40 : isFloat ? 18 : 16)
        b.u16(tag); b.u16(UInt16(format.channels)); b.u32(UInt32(format.sampleRate))
        b.u32(UInt32(format.sampleRate * format.bytesPerFrame)); b.u16(UInt16(format.bytesPerFrame))
        b.u16(bitsPerSample)
        if isFloat && !format.extensible { b.u16(0) }
        if format.extensible {
            b.u16(22)
            b.u16(bitsPerSample) // valid bits: sox refuses fewer than the container's
            b.u32(0) // no speaker positions
            // KSDATAFORMAT_SUBTYPE_PCM or _IEEE_FLOAT: the format tag, then the fixed GUID tail.
            b.u16(format.formatTag); b.u16(0); b.u16(0); b.u16(0x10)
            b.bytes.append(contentsOf: [0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
        }
        if isFloat {
            b.fourCC("fact")
            b.u32(4)
            factOffset = b.bytes.count
            b.u32(0) // frames, kept with the data size
        } else {
            factOffset = nil
        }
        let bextBody = bext.chunkBody(format: format)
        b.fourCC("bext"); b.u32(UInt32(bextBody.count)); b.bytes.append(contentsOf: bextBody)
        if bextBody.count & 1 == 1 { b.bytes.append(0) } // RIFF pads a chunk of odd size
        if let ixml = bext.ixml {
            let body = ixml.chunkBody()
            b.fourCC("iXML"); b.u32(UInt32(body.count)); b.bytes.append(contentsOf: body)
            if body.count & 1 == 1 { b.bytes.append(0) }
        }
        cueRegionOffset = b.bytes.count
        b.fourCC("JUNK"); b.u32(UInt32(Self.cueRegionBytes - 8)); b.zeros(Self.cueRegionBytes - 8)
        dataChunkOffset = b.bytes.count
        b.fourCC("data"); b.u32(0)
        bytes = b.bytes
        setDataBytes(0)
    }

    /// Sets the sizes for `dataBytes` bytes of samples; above `rf64Threshold` bytes of RIFF
    /// (4 GiB, lower in tests) the header becomes RF64 and stays so.
    mutating func setDataBytes(_ dataBytes: UInt64, rf64Threshold: UInt64 = UInt64(UInt32.max)) {
        let pad: UInt64 = dataBytes & 1
        let riffSize = UInt64(dataOffset - 8) + dataBytes + pad
        if riffSize > rf64Threshold { isRF64 = true }
        Self.writeSizes(&bytes, dataChunkOffset: dataChunkOffset, dataBytes: dataBytes, blockAlign: format.bytesPerFrame,
                        rf64: isRF64, factOffset: factOffset)
    }

    /// Writes the sizes of `dataBytes` bytes of samples into a take's header bytes: RF64's
    /// (the ds64 chunk, 0xFFFFFFFF where RIFF's 32 bits were) when `rf64`, else RIFF's; and
    /// the frames of a `fact` chunk. The writer and the repair pass both use it.
    static func writeSizes(_ bytes: inout [UInt8], dataChunkOffset: Int, dataBytes: UInt64, blockAlign: Int,
                           rf64: Bool, factOffset: Int?) {
        let riffSize = UInt64(dataChunkOffset) + dataBytes + (dataBytes & 1) // the file, less RIFF's own 8 bytes
        let frames = dataBytes / UInt64(blockAlign)
        if let factOffset { LittleEndianBytes.patch(&bytes, at: factOffset, min(frames, UInt64(UInt32.max)), count: 4) }
        if rf64 {
            bytes.replaceSubrange(0..<4, with: Array("RF64".utf8))
            bytes.replaceSubrange(ds64Offset..<ds64Offset + 4, with: Array("ds64".utf8))
            LittleEndianBytes.patch(&bytes, at: 4, UInt64(UInt32.max), count: 4)
            LittleEndianBytes.patch(&bytes, at: dataChunkOffset + 4, UInt64(UInt32.max), count: 4)
            let body = ds64Offset + 8
            LittleEndianBytes.patch(&bytes, at: body, riffSize, count: 8)
            LittleEndianBytes.patch(&bytes, at: body + 8, dataBytes, count: 8)
            LittleEndianBytes.patch(&bytes, at: body + 16, frames, count: 8)
            LittleEndianBytes.patch(&bytes, at: body + 24, 0, count: 4)
        } else {
            LittleEndianBytes.patch(&bytes, at: 4, min(riffSize, UInt64(UInt32.max)), count: 4)
            LittleEndianBytes.patch(&bytes, at: dataChunkOffset + 4, min(dataBytes, UInt64(UInt32.max)), count: 4)
        }
    }

    /// Adds a cue point with a label; false when the cue region is full (the take goes on).
    mutating func addCue(frame: Int64, label: String) -> Bool {
        guard cues.count < Self.maxCues else { return false }
        guard let region = Self.cueRegion(cues + [Cue(frame: frame, label: label)]) else { return false }
        cues.append(Cue(frame: frame, label: label))
        bytes.replaceSubrange(cueRegionOffset..<cueRegionOffset + Self.cueRegionBytes, with: region)
        return true
    }

    /// The cue region for `cues`: `cue `, `LIST adtl` with a `labl` each, and JUNK to fill it;
    /// nil when they do not fit.
    static func cueRegion(_ cues: [Cue]) -> [UInt8]? {
        var b = LittleEndianBytes()
        b.fourCC("cue "); b.u32(UInt32(4 + 24 * cues.count)); b.u32(UInt32(cues.count))
        for (i, cue) in cues.enumerated() {
            let position = UInt32(clamping: cue.frame)
            b.u32(UInt32(i + 1)); b.u32(position); b.fourCC("data"); b.u32(0); b.u32(0); b.u32(position)
        }
        var labels = LittleEndianBytes()
        labels.fourCC("adtl")
        for (i, cue) in cues.enumerated() {
            let text = Array(cue.label.utf8.prefix(200)) + [0]
            labels.fourCC("labl"); labels.u32(UInt32(4 + text.count)); labels.u32(UInt32(i + 1))
            labels.bytes.append(contentsOf: text)
            if text.count % 2 == 1 { labels.bytes.append(0) }
        }
        b.fourCC("LIST"); b.u32(UInt32(labels.bytes.count)); b.bytes.append(contentsOf: labels.bytes)
        let rest = cueRegionBytes - b.bytes.count
        guard rest == 0 || rest >= 8 else { return nil }
        if rest >= 8 { b.fourCC("JUNK"); b.u32(UInt32(rest - 8)); b.zeros(rest - 8) }
        return b.bytes
    }
}
