import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing
@testable import StageboxRecorder

@Suite struct TakeFileTests {
    let bext = BroadcastInfo(description: "test", originatorReference: "2026-11-22_1412_0003", date: "2026-11-22",
                             time: "14:12:05", timeReference: 2_000_000_000)

    @Test(arguments: AudioFileEncoding.allCases, [1, 2, 6])
    func writesWhatLibsndfileAndSoxRead(encoding: AudioFileEncoding, channels: Int) throws {
        let dir = try temporaryDirectory("take-\(encoding.rawValue)-\(channels)")
        defer { if ProcessInfo.processInfo.environment["KEEP"] == nil { try? FileManager.default.removeItem(atPath: dir) } }
        let path = dir + "/t.wav"
        let signal = testSignal(frames: 4801, channels: channels)
        let file = try TakeFile(path: path, format: TakeFormat(sampleRate: 48000, channels: channels, encoding: encoding), bext: bext)
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: 4000) }
        #expect(file.addCue(frame: 1234, label: "marker 1"))
        try file.sync()
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress! + 4000 * channels, frames: 801) }
        try file.close()

        let reader = try AudioFileReader(path: path)
        #expect(reader.frames == 4801 && reader.channels == channels && reader.sampleRate == 48000 && reader.encoding == encoding)
        #expect(firstDifference(try reader.readAll(), signal) == nil)
        #expect(soxFrames(path) == 4801)
        #expect(soxWarnings(path).isEmpty, "\(soxWarnings(path))")
        #expect(libsndfileCues(path) == [1234])
        let broadcast = try #require(libsndfileBroadcast(path))
        #expect(broadcast.date == "2026-11-22" && broadcast.time == "14:12:05" && broadcast.timeReference == 2_000_000_000)
        #expect(TakeRepair.check(path, repair: false) == .intact(frames: 4801))
    }

    @Test func neverWritesOverAnExistingFile() throws {
        let dir = try temporaryDirectory("take")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/x.wav", contents: Data("keep me".utf8)))
        #expect(throws: Error.self) {
            try TakeFile(path: dir + "/x.wav", format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24), bext: bext)
        }
        #expect(String(decoding: FileManager.default.contents(atPath: dir + "/x.wav")!, as: UTF8.self) == "keep me")
        do {
            _ = try TakeFile(path: dir + "/missing/x.wav", format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24), bext: bext)
        } catch {
            #expect(error.description.hasPrefix("creating \(dir)/missing/x.wav: "))
        }
    }

    /// The RF64 upgrade, seen with a lower threshold than 4 GiB: the header changes on the way,
    /// without a gap, and sox and libsndfile read every frame.
    @Test func becomesRF64PastTheThreshold() throws {
        let dir = try temporaryDirectory("take")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/big.wav"
        let signal = testSignal(frames: 48000, channels: 2)
        let file = try TakeFile(path: path, format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24), bext: bext,
                                rf64Threshold: 200_000)
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: 24000) }
        try file.sync()
        #expect(!file.isRF64) // 144 000 bytes of samples
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress! + 48000, frames: 24000) }
        try file.sync()
        #expect(file.isRF64)
        try file.close()
        let head = try #require(FileManager.default.contents(atPath: path))
        #expect(String(decoding: head.prefix(4), as: UTF8.self) == "RF64")
        #expect(String(decoding: head[12..<16], as: UTF8.self) == "ds64")
        let reader = try AudioFileReader(path: path)
        #expect(reader.frames == 48000)
        #expect(firstDifference(try reader.readAll(), signal) == nil)
        #expect(soxFrames(path) == 48000)
        #expect(TakeRepair.check(path, repair: false) == .intact(frames: 48000))
    }

    /// Markers live in a fixed region before the samples: when it is full, the take goes on.
    @Test func aFullMarkerRegionRefusesMoreAndTheTakeGoesOn() throws {
        let dir = try temporaryDirectory("take")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.wav"
        let file = try TakeFile(path: path, format: TakeFormat(sampleRate: 48000, channels: 1, encoding: .pcm16), bext: bext)
        var kept = 0
        while file.addCue(frame: Int64(kept * 10), label: "marker \(kept + 1)") { kept += 1 }
        #expect(kept == 100)
        let signal = testSignal(frames: 100, channels: 1)
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: 100) }
        try file.close()
        #expect(libsndfileCues(path).count == kept)
        #expect(soxFrames(path) == 100)
    }
}
