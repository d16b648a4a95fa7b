import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Checks a take's header against its length and, when they disagree (a power cut, a kill),
/// repairs it in place: the samples are kept to the last whole frame and the sizes made to
/// match, so libsndfile, sox and ffmpeg open it.
public enum TakeRepair {
    public enum Outcome: Sendable, Equatable {
        /// The header matches the file.
        case intact(frames: Int64)
        /// The header said `headerFrames`; the file now holds `frames` whole frames (and
        /// `droppedBytes` of a torn last frame were cut). `markersLost` when the cue region was torn.
        case repaired(headerFrames: Int64, frames: Int64, droppedBytes: Int, markersLost: Bool)
        /// Not a take this pass can read (too short, not RIFF, no data chunk): left alone.
        case unreadable(String)
    }

    /// Checks `path` and, with `repair`, fixes it.
    public static func check(_ path: String, repair: Bool = true) -> Outcome {
        do {
            return try run(path, repair: repair)
        } catch {
            return .unreadable("\(error)")
        }
    }

    /// Every `.wav` in `directory`, checked and repaired, in name order. Files that are not
    /// takes (no data chunk in the header) are reported as unreadable and left alone.
    public static func repairAll(in directory: String) -> [(file: String, outcome: Outcome)] {
        TakeDirectory.wavFiles(in: directory).map { ($0, check(directory + "/" + $0)) }
    }

    private static func run(_ path: String, repair: Bool) throws(SystemCallError) -> Outcome {
        let fd = try SystemCallError.naming("opening", path) {
            try FileDescriptor.open(FilePath(path), repair ? .readWrite : .readOnly, options: [.closeOnExec])
        }
        defer { try? fd.close() }
        let length = try SystemCallError.naming("seeking in", path) { try fd.seek(offset: 0, from: .end) }
        var head = [UInt8](repeating: 0, count: Int(min(length, 65_536)))
        _ = try SystemCallError.naming("reading", path) {
            try head.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 0, into: $0) }
        }
        guard head.count >= 12 else { return .unreadable("\(length) bytes: shorter than a RIFF header") }
        let riff = LittleEndianBytes.fourCC(head, at: 0)
        guard riff == "RIFF" || riff == "RF64", LittleEndianBytes.fourCC(head, at: 8) == "WAVE" else {
            return .unreadable("not a RIFF WAVE file")
        }
        guard var layout = Layout(head) else { return .unreadable("no fmt and data chunks in the first 64 KiB") }
        guard layout.madeByStagebox else { return .unreadable("not a Stagebox take (no bext chunk from Stagebox)") }
        guard layout.hasStageboxLayout else {
            return .unreadable("not laid out as Stagebox writes a take (edited by another program?)")
        }
        let stored = layout.storedDataBytes(head)
        let present = UInt64(length) - UInt64(layout.dataOffset)
        // A chunk after the samples that ends the file (an editor's iXML, LIST INFO): the file
        // was finished by someone else, and what follows the samples is not samples.
        if stored < present, try chunkEndsFile(fd, at: UInt64(layout.dataOffset) + stored + (stored & 1), length: UInt64(length)) {
            return .unreadable("has chunks after its samples (edited by another program?)")
        }
        let whole = present - present % UInt64(layout.blockAlign)
        let expectedLength = UInt64(layout.dataOffset) + whole + (whole & 1)
        let riffWanted = UInt64(layout.dataOffset - 8) + whole + (whole & 1)
        let riffOK = layout.isRF64 ? layout.ds64(head, field: 0) == riffWanted
                                   : LittleEndianBytes.read(head, at: 4, count: 4) == riffWanted
        let frames = Int64(whole) / Int64(layout.blockAlign)
        if stored == whole && UInt64(length) == expectedLength && riffOK && !layout.cueRegionTorn {
            return .intact(frames: frames)
        }
        let headerFrames = Int64(min(stored, UInt64(Int64.max))) / Int64(layout.blockAlign)
        let outcome = Outcome.repaired(headerFrames: headerFrames, frames: frames,
                                       droppedBytes: Int(present - whole), markersLost: layout.cueRegionTorn)
        guard repair else { return outcome }

        if ftruncate(fd.rawValue, off_t(UInt64(layout.dataOffset) + whole)) != 0 { throw .last("truncating", path) }
        if whole & 1 == 1 {
            _ = try SystemCallError.naming("padding", path) {
                try fd.writeAll(toAbsoluteOffset: Int64(layout.dataOffset) + Int64(whole), [UInt8(0)])
            }
        }
        layout.setSizes(&head, dataBytes: whole)
        let header = Array(head[0..<layout.dataOffset])
        _ = try SystemCallError.naming("writing the header of", path) {
            try header.withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: 0, $0) }
        }
        if fsync(fd.rawValue) != 0 { throw .last("fsync", path) }
        return outcome
    }

    /// Whether a well-formed chunk (four printable ASCII bytes, then a size) starts at `offset`
    /// and, with any after it, ends exactly at the file's end.
    private static func chunkEndsFile(_ fd: FileDescriptor, at offset: UInt64, length: UInt64) throws(SystemCallError) -> Bool {
        var at = offset
        var header = [UInt8](repeating: 0, count: 8)
        while at + 8 <= length {
            let n = try SystemCallError.naming("reading", nil) {
                try header.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: Int64(at), into: $0) }
            }
            guard n == 8, header[0..<4].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return false }
            let size = LittleEndianBytes.read(header, at: 4, count: 4)
            at += 8 + size + (size & 1)
            if at == length { return true }
        }
        return false
    }

    /// Where a take's chunks are, found by walking them; when a torn cue region breaks the walk,
    /// Stagebox's own layout (the data chunk a fixed distance after `bext`) is used instead.
    private struct Layout {
        var dataChunkOffset = 0
        var dataOffset: Int { dataChunkOffset + 8 }
        var blockAlign = 0
        var isRF64: Bool
        var hasDS64Room = false
        var cueRegionTorn = false
        var cueRegionOffset: Int?
        /// Whether the `bext` chunk names Stagebox as the originator: only its own takes are
        /// repaired (another WAV may carry chunks after its samples, which are not samples).
        var madeByStagebox = false
        var factOffset: Int?
        /// Stagebox's data chunk follows its cue region directly.
        var hasStageboxLayout: Bool { cueRegionOffset.map { $0 + TakeHeader.cueRegionBytes == dataChunkOffset } ?? false }

        init?(_ head: [UInt8]) {
            isRF64 = LittleEndianBytes.fourCC(head, at: 0) == "RF64"
            var offset = 12
            while offset + 8 <= head.count {
                let id = LittleEndianBytes.fourCC(head, at: offset)
                let size = Int(LittleEndianBytes.read(head, at: offset + 4, count: 4))
                switch id {
                case "data":
                    dataChunkOffset = offset
                    if blockAlign == 0 { return nil }
                    return
                case "fmt " where offset + 22 <= head.count:
                    blockAlign = Int(LittleEndianBytes.read(head, at: offset + 20, count: 2))
                case "JUNK" where offset == TakeHeader.ds64Offset && size == 28, "ds64":
                    hasDS64Room = true
                case "bext":
                    cueRegionOffset = offset + 8 + size + (size & 1)
                    // The originator field (after the 256-byte description): "Stagebox".
                    if offset + 8 + 256 + 8 <= head.count {
                        madeByStagebox = head[(offset + 8 + 256)..<(offset + 8 + 256 + 8)].elementsEqual("Stagebox".utf8)
                    }
                case "iXML" where cueRegionOffset != nil:
                    // Stagebox's cue region follows the iXML chunk when there is one.
                    cueRegionOffset = offset + 8 + size + (size & 1)
                case "fact" where offset + 12 <= head.count:
                    factOffset = offset + 8
                default: break
                }
                let next = offset + 8 + size + (size & 1)
                if next <= offset || next + 8 > head.count { break }
                offset = next
            }
            // The walk broke: a cue region cut mid-write. Stagebox's data chunk follows it.
            guard let region = cueRegionOffset, blockAlign > 0,
                  region + TakeHeader.cueRegionBytes + 8 <= head.count,
                  LittleEndianBytes.fourCC(head, at: region + TakeHeader.cueRegionBytes) == "data" else { return nil }
            dataChunkOffset = region + TakeHeader.cueRegionBytes
            cueRegionTorn = true
        }

        func ds64(_ head: [UInt8], field: Int) -> UInt64 {
            LittleEndianBytes.read(head, at: TakeHeader.ds64Offset + 8 + 8 * field, count: 8)
        }

        func storedDataBytes(_ head: [UInt8]) -> UInt64 {
            isRF64 ? ds64(head, field: 1) : LittleEndianBytes.read(head, at: dataChunkOffset + 4, count: 4)
        }

        /// Writes the sizes for `dataBytes` into the header bytes (RF64 when it was, or when
        /// RIFF's 32 bits no longer hold them) and blanks a torn cue region.
        mutating func setSizes(_ head: inout [UInt8], dataBytes: UInt64) {
            let riffSize = UInt64(dataOffset - 8) + dataBytes + (dataBytes & 1)
            if riffSize > UInt64(UInt32.max) && hasDS64Room { isRF64 = true }
            TakeHeader.writeSizes(&head, dataChunkOffset: dataChunkOffset, dataBytes: dataBytes, blockAlign: blockAlign,
                                  rf64: isRF64, factOffset: factOffset)
            if cueRegionTorn, let region = cueRegionOffset {
                var junk = LittleEndianBytes()
                junk.fourCC("JUNK"); junk.u32(UInt32(TakeHeader.cueRegionBytes - 8)); junk.zeros(TakeHeader.cueRegionBytes - 8)
                head.replaceSubrange(region..<region + TakeHeader.cueRegionBytes, with: junk.bytes)
            }
        }
    }
}
