import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing
@testable import StageboxRecorder

/// The iXML chunk keeps its size whatever the slate holds, so the chunks after it stay where
/// readers look for them (a long scene once made a take no reader could open).
@Suite struct IXMLTests {
    private func ixml(_ field: String) -> IXML {
        IXML(project: field, scene: field, take: 1, tape: field, note: field, trackNames: ["codec.in 1"],
             timeReference: 0, sampleRate: 48000)
    }

    @Test(arguments: ["", "12A", String(repeating: "&", count: 1017), String(repeating: "é", count: 900)])
    func theChunkIsAlways2048Bytes(field: String) {
        #expect(ixml(field).chunkBody().count == IXML.chunkBytes)
    }

    @Test func aTakeWithTheLongestSlateOpensInLibsndfileAndSox() throws {
        let s = try Scratch()
        defer { s.remove() }
        let path = s.path("long-slate.wav")
        let long = String(repeating: "&", count: 1017)
        let bext = BroadcastInfo(description: long, originatorReference: "t", date: "2026-11-29", time: "14:00:00",
                                 timeReference: 0, ixml: ixml(long))
        let signal = testSignal(frames: 4800, channels: 2)
        let file = try TakeFile(path: path, format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24), bext: bext)
        try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: 4800) }
        try file.close()
        #expect(try AudioFileReader(path: path).frames == 4800)
        #expect(soxFrames(path) == 4800)
    }
}
