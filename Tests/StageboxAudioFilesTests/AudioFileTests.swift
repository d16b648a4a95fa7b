import StageboxTestSupport
import Foundation
import Testing
@testable import StageboxAudioFiles

@Suite struct AudioFileTests {
    private func path(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-\(UUID().uuidString)-\(name)").path
    }

    /// A 16-bit stereo WAV of 4800 frames of `value`, its bytes to spoil.
    private func stereoWav(_ p: String, _ value: Float) throws -> [UInt8] {
        let w = try AudioFileWriter(path: p, sampleRate: 48000, channels: 2, encoding: .pcm16)
        try w.write([Float](repeating: value, count: 2 * 4800))
        try w.close()
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: p)))
    }

    @Test(arguments: AudioFileEncoding.allCases)
    func roundTripsBitExact(encoding: AudioFileEncoding) throws {
        let p = path("rt.wav")
        defer { try? FileManager.default.removeItem(atPath: p) }
        // Values every encoding holds exactly: multiples of 2^-15.
        let samples = (0..<3000).map { Float(($0 * 7919) % 65536 - 32768) / 32768 }
        let w = try AudioFileWriter(path: p, sampleRate: 44100, channels: 3, encoding: encoding)
        try w.write(samples)
        try w.close()
        let r = try AudioFileReader(path: p)
        #expect(r.channels == 3 && r.sampleRate == 44100 && r.frames == 1000 && r.encoding == encoding)
        #expect(firstDifference(try r.readAll(), samples) == nil)
    }

    @Test func refusesWhatIsNotAWav() throws {
        let p = path("x.wav")
        defer { try? FileManager.default.removeItem(atPath: p) }
        try Data("this is not audio at all, just some text".utf8).write(to: URL(fileURLWithPath: p))
        #expect(throws: AudioFileError.self) { try AudioFileReader(path: p) }
        #expect(throws: AudioFileError.self) { try AudioFileReader(path: "/nonexistent/a.wav") }
        do { _ = try AudioFileReader(path: "/nonexistent/a.wav") } catch {
            #expect(error.path == "/nonexistent/a.wav" && !error.message.isEmpty)
        }
    }

    /// What is wrong, in words: not libsndfile's raw text, not a format number.
    @Test func errorsSayWhatIsWrongInWords() throws {
        func message(_ path: String) -> String {
            do { _ = try AudioFileReader(path: path); return "opened" } catch { return error.message }
        }
        let text = path("text.wav"), empty = path("empty.wav"), bytes = path("u8.wav")
        defer { for p in [text, empty, bytes] { try? FileManager.default.removeItem(atPath: p) } }
        try Data("this is not audio at all, just some text".utf8).write(to: URL(fileURLWithPath: text))
        try Data().write(to: URL(fileURLWithPath: empty))
        // An 8-bit WAV: RIFF header, fmt (PCM, 1 channel, 8000 Hz, 8 bits), 4 bytes of data.
        var wav = Data("RIFF".utf8) + le32(40) + Data("WAVEfmt ".utf8) + le32(16)
        wav += Data([1, 0, 1, 0]) + le32(8000) + le32(8000) + Data([1, 0, 8, 0]) + Data("data".utf8) + le32(4)
        wav += Data([128, 128, 128, 128])
        try wav.write(to: URL(fileURLWithPath: bytes))
        #expect(message("/nonexistent/a.wav") == "no such file")
        #expect(message(FileManager.default.temporaryDirectory.path) == "a directory, not an audio file")
        #expect(message(empty) == "an empty file, not an audio file")
        #expect(message(text).hasPrefix("not an audio file this build can read"))
        #expect(message(bytes) == "opened", "an 8-bit WAV is audio libsndfile reads")
    }

    private func le32(_ v: UInt32) -> Data { withUnsafeBytes(of: v.littleEndian) { Data($0) } }

    @Test func readsEightBitAsSixteen() throws {
        // An 8-bit unsigned WAV, written by hand.
        var bytes = [UInt8]()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        bytes += Array("RIFF".utf8); u32(36 + 100); bytes += Array("WAVE".utf8)
        bytes += Array("fmt ".utf8); u32(16); u16(1); u16(1); u32(8000); u32(8000); u16(1); u16(8)
        bytes += Array("data".utf8); u32(100); bytes += [UInt8](repeating: 128, count: 100)
        let p = path("u8.wav")
        defer { try? FileManager.default.removeItem(atPath: p) }
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        let r = try AudioFileReader(path: p)
        #expect(r.channels == 1 && r.sampleRate == 8000 && r.frames == 100)
        #expect(r.encoding == .pcm16, "a copy keeps every 8-bit sample in 16 bits")
        #expect(r.formatDescription.contains("8 bit"), "\(r.formatDescription)")
        #expect(try r.readAll() == [Float](repeating: 0, count: 100), "unsigned 128 is silence")
    }

    @Test func aTruncatedFileIsReportedNotSilentlyShortened() throws {
        let p = path("trunc.wav")
        defer { try? FileManager.default.removeItem(atPath: p) }
        // Cut the data short: the header still claims 4800 frames.
        let data = try stereoWav(p, 0.5)
        try Data(data.prefix(data.count - 4000)).write(to: URL(fileURLWithPath: p))
        // Read as far as it goes, with a note that says so (render and play print it).
        let r = try AudioFileReader(path: p)
        let note = try #require(r.headerNote, "a cut file is reported")
        #expect(note.hasPrefix("its header does not match the file (libsndfile: ") && note.hasSuffix("reading the audio that is there"), "\(note)")
        #expect(try r.readAll().count == 2 * 3800)
    }

    /// sox writing to a pipe cannot seek back: its header claims 0x7FFFF000 bytes. Every reader
    /// plays such a file to its end, and so does Stagebox.
    @Test func aWavWrittenToAPipeIsReadToItsEnd() throws {
        let p = path("piped.wav")
        defer { try? FileManager.default.removeItem(atPath: p) }
        var data = try stereoWav(p, 0.25)
        let claimed: UInt32 = 0x7FFF_F000
        for (i, b) in withUnsafeBytes(of: claimed.littleEndian, Array.init).enumerated() { data[4 + i] = b; data[40 + i] = b }
        try Data(data).write(to: URL(fileURLWithPath: p))
        let r = try AudioFileReader(path: p)
        #expect(r.headerNote != nil)
        #expect(try r.readAll() == [Float](repeating: 0.25, count: 2 * 4800))
    }
}
