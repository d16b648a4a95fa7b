import Testing
@testable import StageboxProtocol

/// Texts longer than the wire holds are cut where a reader can still read them: whole
/// characters, and a long answer's last whole lines (a log's newest) after a note that says so.
@Suite struct WireTextTests {
    private func roundTrip(long text: String) throws -> String {
        var w = WireWriter()
        w.long(text)
        var r = WireReader(w.bytes[...])
        return try r.long()
    }

    @Test func aLongAnswerKeepsItsLastWholeLines() throws {
        let lines = (1...3000).map { "line \($0): " + String(repeating: "é", count: 20) }
        let got = try roundTrip(long: lines.joined(separator: "\n"))
        #expect(got.utf8.count <= WireWriter.longBytes)
        let kept = got.split(separator: "\n").map(String.init)
        #expect(kept.first == "(the first lines left out: an answer holds at most 60000 bytes)")
        #expect(kept.last == lines.last)
        #expect(kept.dropFirst().allSatisfy { lines.contains($0) }, "only whole lines")
    }

    @Test func oneLongLineIsCutAtACharacter() throws {
        let got = try roundTrip(long: String(repeating: "é", count: 40_000))
        #expect(got.utf8.count <= WireWriter.longBytes)
        #expect(got.hasSuffix("éé"))
    }

    @Test func aStringIsCutBeforeACharacterThatWouldNotFit() throws {
        var w = WireWriter()
        w.string("a" + String(repeating: "é", count: 600)) // 1201 bytes; 1024 would split an é
        var r = WireReader(w.bytes[...])
        let got = try r.string()
        #expect(got == "a" + String(repeating: "é", count: 511))
        var whole = WireWriter()
        whole.string(String(repeating: "é", count: 600)) // 1024 ends between two é: none is cut
        var wr = WireReader(whole.bytes[...])
        #expect(try wr.string() == String(repeating: "é", count: 512))
    }
}
