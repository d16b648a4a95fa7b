import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing
@testable import StageboxRecorder

/// A take cut at any moment (a kill, a power cut) is repaired to its last whole frame.
@Suite struct TakeRepairTests {
    /// As the recorder writes them: with an iXML chunk between `bext` and the cue region.
    let bext = BroadcastInfo(description: "t", originatorReference: "t", date: "2026-11-22", time: "14:12:05", timeReference: 0,
                             ixml: IXML(project: "p", scene: "1", take: 1, tape: "", note: "", trackNames: ["a 1", "a 2"],
                                        timeReference: 0, sampleRate: 48000))
    /// As takes made before the iXML chunk were.
    let bextAlone = BroadcastInfo(description: "t", originatorReference: "t", date: "2026-11-22", time: "14:12:05", timeReference: 0)

    /// A take whose header was synced at `synced` frames and which holds `written` frames and
    /// `torn` bytes of one more, as a killed writer leaves it.
    private func cutTake(_ path: String, synced: Int, written: Int, torn: [UInt8] = [], rf64Threshold: UInt64 = UInt64(UInt32.max),
                         withIXML: Bool = true) throws -> [Float] {
        let signal = testSignal(frames: written, channels: 2)
        do {
            let file = try TakeFile(path: path, format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24),
                                    bext: withIXML ? bext : bextAlone,
                                    rf64Threshold: rf64Threshold)
            try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: synced) }
            file.addCue(frame: 10, label: "marker 1")
            try file.sync()
            try signal.withUnsafeBufferPointer { try file.append($0.baseAddress! + synced * 2, frames: written - synced) }
            // Gone without close: the header still says `synced`.
        }
        if !torn.isEmpty { try appendBytes(path, torn) }
        return signal
    }

    @Test(arguments: [true, false])
    func keepsEveryWholeFrameWrittenAfterTheLastSync(withIXML: Bool) throws {
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/cut.wav"
        let signal = try cutTake(path, synced: 1000, written: 2500, torn: [1, 2, 3, 4], withIXML: withIXML)
        #expect(TakeRepair.check(path, repair: false) == .repaired(headerFrames: 1000, frames: 2500, droppedBytes: 4, markersLost: false))
        #expect(TakeRepair.check(path) == .repaired(headerFrames: 1000, frames: 2500, droppedBytes: 4, markersLost: false))
        #expect(TakeRepair.check(path) == .intact(frames: 2500))
        let reader = try AudioFileReader(path: path)
        #expect(reader.frames == 2500)
        #expect(firstDifference(try reader.readAll(), signal) == nil)
        #expect(soxFrames(path) == 2500)
        #expect(libsndfileCues(path) == [10])
    }

    @Test func aHeaderAheadOfTheSamplesIsCutBack() throws {
        // A power cut can keep a header newer than the samples it counts.
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/short.wav"
        _ = try cutTake(path, synced: 3000, written: 3000)
        let whole = fileLength(path)
        #expect(truncate(path, off_t(whole - 6 * 500 - 5)) == 0)
        #expect(TakeRepair.check(path) == .repaired(headerFrames: 3000, frames: 2499, droppedBytes: 1, markersLost: false))
        #expect(try AudioFileReader(path: path).frames == 2499)
        #expect(soxFrames(path) == 2499)
    }

    @Test func anRF64TakeIsRepairedAsRF64() throws {
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/rf64.wav"
        let signal = try cutTake(path, synced: 20000, written: 30000, torn: [9], rf64Threshold: 100_000)
        #expect(TakeRepair.check(path) == .repaired(headerFrames: 20000, frames: 30000, droppedBytes: 1, markersLost: false))
        let head = try #require(FileManager.default.contents(atPath: path))
        #expect(String(decoding: head.prefix(4), as: UTF8.self) == "RF64")
        #expect(firstDifference(try AudioFileReader(path: path).readAll(), signal) == nil)
        #expect(soxFrames(path) == 30000)
    }

    @Test func aTornMarkerRegionIsBlankedAndTheSamplesKept() throws {
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/torn.wav"
        let signal = try cutTake(path, synced: 500, written: 500)
        // Tear the cue chunk's size, as a header write cut between two sectors could.
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        let cue = try #require(bytes.indices.first { i in i + 4 <= bytes.count && bytes[i..<i + 4].elementsEqual(Array("cue ".utf8)) })
        bytes[cue + 4] = 0x77; bytes[cue + 5] = 0x77
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(TakeRepair.check(path) == .repaired(headerFrames: 500, frames: 500, droppedBytes: 0, markersLost: true))
        #expect(firstDifference(try AudioFileReader(path: path).readAll(), signal) == nil)
        #expect(soxFrames(path) == 500)
    }

    /// A WAV from elsewhere (an editor's, with a chunk after its samples) is never "repaired":
    /// only files whose bext chunk names Stagebox are.
    @Test func leavesAnotherProgramsWavAlone() throws {
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/2026-11-22_1412_0009_song.wav"
        let writer = try AudioFileWriter(path: path, sampleRate: 48000, channels: 2, encoding: .pcm24)
        try writer.write(testSignal(frames: 4800, channels: 2))
        try writer.close()
        try appendBytes(path, Array("LIST".utf8) + [14, 0, 0, 0] + Array("INFOINAM".utf8) + [2, 0, 0, 0, 0x41, 0])
        let before = try #require(FileManager.default.contents(atPath: path))
        guard case let .unreadable(reason) = TakeRepair.check(path) else { Issue.record("it was checked as a take"); return }
        #expect(reason == "not a Stagebox take (no bext chunk from Stagebox)")
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    /// A take finished and then edited elsewhere (a chunk added after its samples, the bext
    /// kept) is not "repaired" into noise.
    @Test func leavesATakeEditedByAnotherProgramAlone() throws {
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/edited.wav"
        let file = try TakeFile(path: path, format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24), bext: bext)
        let signal = testSignal(frames: 480, channels: 2)
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: 480) }
        try file.close()
        try appendBytes(path, Array("iXML".utf8) + [6, 0, 0, 0] + Array("<xml/>".utf8))
        let before = try #require(FileManager.default.contents(atPath: path))
        #expect(TakeRepair.check(path) == .unreadable("has chunks after its samples (edited by another program?)"))
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    /// Sequence numbers from files someone else named (too many digits) neither count nor trap.
    @Test func hugeSequenceNumbersInNamesAreNotTakes() throws {
        let dir = try temporaryDirectory("sequence")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/2026-11-22_1412_9223372036854775807_x.wav", contents: Data()))
        #expect(FileManager.default.createFile(atPath: dir + "/2026-11-22_1412_0041_x.wav", contents: Data()))
        #expect(try TakeDirectory(path: dir).nextSequence() == 42)
        #expect(TakeName.sequence(of: "2026-11-22_1412_-5_x.wav") == nil)
    }

    @Test func leavesWhatIsNotATakeAlone() throws {
        let dir = try temporaryDirectory("repair")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/text.wav", contents: Data("not a wave file at all".utf8)))
        #expect(FileManager.default.createFile(atPath: dir + "/empty.wav", contents: Data()))
        let outcomes = TakeRepair.repairAll(in: dir)
        #expect(outcomes.map(\.file) == ["empty.wav", "text.wav"])
        for (_, outcome) in outcomes {
            guard case .unreadable = outcome else { Issue.record("\(outcome)"); continue }
        }
        #expect(String(decoding: FileManager.default.contents(atPath: dir + "/text.wav")!, as: UTF8.self) == "not a wave file at all")
    }
}
