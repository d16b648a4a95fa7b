import Foundation
import StageboxDiagnostics
import StageboxTestSupport
import Testing

@Suite struct SupportBundleTests {
    @Test func sectionsAreTitledAndSecretsRemoved() {
        var bundle = SupportBundle()
        bundle.add("status", ["version     0.1.0", "psk=planted-secret"])
        bundle.add("log", ["one", "two"])
        let text = bundle.text()
        #expect(text == "== status ==\nversion     0.1.0\npsk=<removed>\n\n== log ==\none\ntwo\n")
        #expect(!text.contains("planted-secret"))
    }

    @Test func theLargestSectionLosesItsOldestLinesToStayUnderTheLimit() {
        var bundle = SupportBundle()
        bundle.limit = 20_000
        bundle.add("status", ["version 0.1.0"])
        bundle.add("log", (0..<5000).map { "log line \($0) with some words" })
        let text = bundle.text()
        #expect(text.utf8.count <= 20_000)
        #expect(text.contains("== status ==\nversion 0.1.0"))
        #expect(text.contains("log line 4999 with some words"), "the latest lines are kept")
        #expect(!text.contains("log line 0 with"))
        let note = text.split(separator: "\n").first { $0.hasSuffix("older lines cut to stay under the size limit)") }
        let cut = note.flatMap { Int($0.dropFirst().prefix { $0.isNumber }) } ?? 0
        #expect(cut > 4000 && text.contains("log line \(cut) with") && !text.contains("log line \(cut - 1) with"),
                "the note counts every line cut: \(String(describing: note))")
    }

    @Test func aRunawayLineIsCut() {
        var bundle = SupportBundle()
        bundle.add("log", [String(repeating: "x", count: 100_000)])
        #expect(bundle.text().utf8.count < 500)
    }

    /// Two bundles made in the same second are two files, not one written over the other.
    @Test func aSecondBundleInTheSameSecondGetsItsOwnName() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let name = "stagebox-support-20261129-143000.txt"
        let first = try BundleFile.write("one", into: dir.path(""), name: name)
        let second = try BundleFile.write("two", into: dir.path(""), name: name)
        let third = try BundleFile.write("three", into: dir.path(""), name: name)
        #expect(first.hasSuffix("/" + name))
        #expect(second.hasSuffix("/stagebox-support-20261129-143000-2.txt"), "\(second)")
        #expect(third.hasSuffix("/stagebox-support-20261129-143000-3.txt"), "\(third)")
        #expect(try String(contentsOfFile: first, encoding: .utf8) == "one")
    }
}
