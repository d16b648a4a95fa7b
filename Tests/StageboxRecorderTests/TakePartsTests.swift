import Foundation
import StageboxAudioFiles
import StageboxSystem
import StageboxTestSupport
import Testing
@testable import StageboxRecorder

/// A take on FAT32 splits before 4 GiB, as field recorders do; tested at a lowered limit.
@Suite struct TakePartsTests {
    let bext = BroadcastInfo(description: "test", originatorReference: "2026-11-26_1700_0007", date: "2026-11-26",
                             time: "17:00:00", timeReference: 3_000_000_000)
    let format = TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24)

    @Test func aTakeSplitsIntoPartsThatJoinToExactlyTheTake() throws {
        let dir = try temporaryDirectory("take-parts")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/2026-11-26_1700_0007_codec.in.wav"
        let signal = testSignal(frames: 100_001, channels: 2)
        let parts = try TakeParts(path: path, format: format, bext: bext, limit: 200_001)
        // In uneven pieces, so that seams fall inside appends; a marker ahead of the writing.
        var done = 0
        for piece in [1, 777, 4096, 30_000, 33_333, 31_794] {
            if done == 4874 { #expect(parts.addCue(frame: 70_000, label: "late verse")) }
            try signal.withUnsafeBufferPointer { try parts.append($0.baseAddress! + done * 2, frames: piece) }
            done += piece
        }
        #expect(done == 100_001 && parts.frames == 100_001)
        try parts.close()

        #expect(parts.paths.count == 4, "600 kB of samples at 200 kB a part")
        #expect(parts.paths == parts.paths.sorted(), "the parts sort in order")
        #expect(parts.paths[1].hasSuffix("_codec.in_part002.wav"))
        var joined: [Float] = []
        var starts: [UInt64] = []
        for part in parts.paths {
            #expect(fileLength(part) <= 200_001, "\(part): \(fileLength(part)) bytes")
            #expect(soxWarnings(part).isEmpty, "\(part) opens cleanly in sox")
            starts.append(try #require(libsndfileBroadcast(part)).timeReference)
            starts[starts.count - 1] -= UInt64(joined.count / 2)
            joined += try AudioFileReader(path: part).readAll()
        }
        #expect(firstDifference(joined, signal) == nil, "no frame lost or repeated at a seam")
        #expect(starts.allSatisfy { $0 == 3_000_000_000 }, "each part's time reference is its own first sample's")
        // The marker is in the part that holds frame 70 000, at that part's own frame.
        let holder = try #require(parts.paths.firstIndex { libsndfileCues($0).count == 1 })
        let before = try parts.paths[..<holder].reduce(0) { $0 + (try AudioFileReader(path: $1).frames) }
        #expect(libsndfileCues(parts.paths[holder]) == [UInt32(70_000 - before)])
    }

    @Test func withoutALimitATakeIsOneFile() throws {
        let dir = try temporaryDirectory("take-one-part")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let signal = testSignal(frames: 50_000, channels: 2)
        let parts = try TakeParts(path: dir + "/t.wav", format: format, bext: bext)
        try signal.withUnsafeBufferPointer { try parts.append($0.baseAddress!, frames: 50_000) }
        try parts.close()
        #expect(parts.paths == [dir + "/t.wav"])
        #expect(firstDifference(try AudioFileReader(path: dir + "/t.wav").readAll(), signal) == nil)
    }

    @Test func onlyFATLimitsAFile() {
        #expect(TakeParts.limit(forFilesystem: "vfat") == 4_294_967_295)
        #expect(TakeParts.limit(forFilesystem: "vfat", lowered: 1_000_000) == 1_000_000)
        #expect(TakeParts.limit(forFilesystem: "exfat", lowered: 1_000_000) == nil, "exFAT and ext4 get RF64 instead")
        #expect(TakeParts.limit(forFilesystem: "ext4") == nil)
        #expect(TakeParts.partPath("/m/a.wav", number: 1) == "/m/a.wav")
        #expect(TakeParts.partPath("/m/a.wav", number: 12) == "/m/a_part012.wav")
        let names = (1...12).map { TakeParts.partPath("a.wav", number: $0) }
        #expect(names == names.sorted())
    }

    /// Mono PCM_24 without iXML: 3-byte frames, so an odd data chunk gets a pad byte at close.
    /// At this limit (header 8 920 bytes + 3 × 20 001) a part that forgot the pad byte would
    /// take 20 001 frames and end one byte past it.
    @Test func thePadByteOfAnOddPartStaysWithinTheLimit() throws {
        let dir = try temporaryDirectory("take-parts-mono")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let mono = TakeFormat(sampleRate: 48000, channels: 1, encoding: .pcm24)
        var plain = bext
        plain.ixml = nil
        let signal = testSignal(frames: 50_003, channels: 1)
        let parts = try TakeParts(path: dir + "/m.wav", format: mono, bext: plain, limit: 68_923)
        try signal.withUnsafeBufferPointer { try parts.append($0.baseAddress!, frames: 20_000) }
        // Markers on frames at the seam, given before those frames are written.
        #expect(parts.addCue(frame: 20_000, label: "seam"))
        #expect(parts.addCue(frame: 20_001, label: "after the seam"))
        try signal.withUnsafeBufferPointer { try parts.append($0.baseAddress! + 20_000, frames: 30_003) }
        try parts.close()
        var joined: [Float] = []
        for part in parts.paths {
            #expect(fileLength(part) <= 68_923, "\(part): \(fileLength(part)) bytes")
            joined += try AudioFileReader(path: part).readAll()
        }
        #expect(fileLength(parts.paths[0]) >= 68_923 - 3, "a part is filled to the limit")
        #expect(firstDifference(joined, signal) == nil)
        let first = try AudioFileReader(path: parts.paths[0]).frames
        let cued = [20_000, 20_001]
        #expect(libsndfileCues(parts.paths[0]) == cued.filter { $0 < first }.map { UInt32($0) })
        #expect(libsndfileCues(parts.paths[1]) == cued.filter { $0 >= first }.map { UInt32($0 - first) })
        #expect(parts.cuesRefused == 0)
    }

    @Test func aLimitWithNoRoomForAFrameIsAnErrorNotEndlessParts() throws {
        let dir = try temporaryDirectory("take-parts-tiny")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let parts = try TakeParts(path: dir + "/t.wav", format: format, bext: bext, limit: 1000)
        let signal = testSignal(frames: 10, channels: 2)
        #expect(throws: SystemCallError.self) { try signal.withUnsafeBufferPointer { try parts.append($0.baseAddress!, frames: 10) } }
        try? parts.close()
        #expect(parts.paths.count == 1)
    }

    @Test func aLaterPartKnowsItsTakeAndItsStartingTime() {
        #expect(TakeParts.part(of: "2026-11-26_1700_0007_codec.in_part002.wav")! == ("2026-11-26_1700_0007_codec.in.wav", 2))
        #expect(TakeParts.part(of: "2026-11-26_1700_0007_codec.in.wav") == nil)
        #expect(TakeParts.part(of: "x_part1.wav") == nil && TakeParts.part(of: "x_partABC.wav") == nil)
        // A part that starts after midnight says so: 23:59:30 plus 45 s is 00:00:15 the next day.
        let late = BroadcastInfo(description: "", originatorReference: "", date: "2026-12-31", time: "23:59:30",
                                 timeReference: 86_370 * 48000)
        let next = late.startingLater(by: 45 * 48000, sampleRate: 48000)
        #expect(next.date == "2027-01-01" && next.time == "00:00:15" && next.timeReference == 86_415 * 48000)
    }

    @Test func aSplitTakeIsListedAsOneTake() {
        let found = [
            TakeSummary(file: "a.wav", frames: 100, seconds: 1, bytes: 1000, note: nil),
            TakeSummary(file: "a_part002.wav", frames: 50, seconds: 0.5, bytes: 500, note: "repaired: cut"),
            TakeSummary(file: "b.wav", frames: 10, seconds: 0.1, bytes: 100, note: nil),
        ]
        let joined = Recorder.joiningParts(found)
        #expect(joined.count == 2)
        #expect(joined[0].frames == 150 && joined[0].bytes == 1500 && joined[0].seconds == 1.5)
        #expect(joined[0].note == "a_part002.wav: repaired: cut; in 2 parts")
        #expect(joined[1] == found[2])
    }
}
