import Testing

@Suite struct CheckConfigCommandTests {
    @Test func aGoodFilePrintsNothingAndExitsZero() throws {
        let s = try Scratch()
        defer { s.remove() }
        let file = try s.write("ok.toml", "[audio]\nrate = 48000\n\n[[connect]]\nfrom = \"tone\"\nto = \"codec.out\"\n")
        let r = try StageboxProcess.run(["check-config", file])
        #expect(r.status == 0)
        #expect(r.stdout.isEmpty)
    }

    @Test func everyProblemIsPrintedWithFileLineAndKey() throws {
        let s = try Scratch()
        defer { s.remove() }
        let file = try s.write("bad.toml", """
            [audio]
            rate = 1
            inputs = 2
            outputs = 3
            colour = "red"

            [[connect]]
            from = "codec.in"
            to = "codec.out"

            [[connect]]
            from = "mic"
            to = "codec.out"
            """)
        let r = try StageboxProcess.run(["check-config", file])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("\(file):2: audio.rate: 1 is out of range (allowed: 8000–192000)"))
        #expect(lines.contains { $0.hasPrefix("\(file):5: audio.colour: unknown key") })
        // Connection problems are found too, with the line of their [[connect]].
        let broken = try s.write("conn.toml", """
            [audio]
            inputs = 2
            outputs = 3

            [[connect]]
            from = "codec.in"
            to = "codec.out"

            [[connect]]
            from = "mic"
            to = "codec.out"
            """)
        let c = try StageboxProcess.run(["check-config", broken])
        #expect(c.status == 1)
        #expect(c.stdout.contains("\(broken):5: connect[1]: cannot connect codec.in (2 channels) to codec.out (3 channels)"))
        #expect(c.stdout.contains("\(broken):9: connect[2]: no such port: mic (allowed: codec.in, tone, codec.out)"))
    }

    @Test func severalProblemsAtOnceArePrintedInLineOrder() throws {
        let s = try Scratch()
        defer { s.remove() }
        // A bad rate and a missing key hide neither a port that does not exist nor a channel out of range.
        let file = try s.write("many.toml", """
            [[connect]]
            from = "codec.in"

            [audio]
            rate = 1

            [[connect]]
            from = "mic"
            to = "codec.out"

            [[connect]]
            from = "codec.in:3"
            to = "codec.out:1"
            """)
        let r = try StageboxProcess.run(["check-config", file])
        #expect(r.status == 1)
        #expect(r.stdout.split(separator: "\n").map(String.init) == [
            "\(file):1: connect[1].to: missing",
            "\(file):5: audio.rate: 1 is out of range (allowed: 8000–192000)",
            "\(file):7: connect[2]: no such port: mic (allowed: codec.in, tone, codec.out)",
            "\(file):11: connect[3]: codec.in has 2 channels (1 to 2): there is no channel 3",
        ])
    }

    @Test func aChannelConnectionIsGoodAndAWrongChannelCountHidesOnlyWhatDependsOnIt() throws {
        let s = try Scratch()
        defer { s.remove() }
        let good = try s.write("good.toml", "[[connect]]\nfrom = \"codec.in:2\"\nto = \"codec.out:1\"\n")
        let ok = try StageboxProcess.run(["check-config", good])
        #expect(ok.status == 0 && ok.stdout.isEmpty, "\(ok.stdout)")
        // With inputs wrong, codec.in's channels are unknown: only the inputs and the missing port are told.
        let bad = try s.write("bad.toml", """
            [audio]
            inputs = 0

            [[connect]]
            from = "codec.in:2"
            to = "codec.out:1"

            [[connect]]
            from = "mic:1"
            to = "codec.out"
            """)
        let r = try StageboxProcess.run(["check-config", bad])
        #expect(r.stdout.split(separator: "\n").map(String.init) == [
            "\(bad):2: audio.inputs: 0 is out of range (allowed: 1–32)",
            "\(bad):8: connect[2]: no such port: mic (allowed: codec.in, tone, codec.out)",
        ])
    }

    @Test func problemsOfTheWholeFileHaveNoLine() throws {
        let s = try Scratch()
        defer { s.remove() }
        let missing = s.path("absent.toml")
        let r = try StageboxProcess.run(["check-config", missing])
        #expect(r.status == 1)
        #expect(r.stdout == "\(missing): No such file or directory\n")
        // No [[connect]]: the default codec.in -> codec.out is checked, and it is in no line either.
        let file = try s.write("shape.toml", "[audio]\ninputs = 2\noutputs = 3\n")
        let d = try StageboxProcess.run(["check-config", file])
        #expect(d.stdout == "\(file): connect: the default connection codec.in -> codec.out: cannot connect codec.in "
                + "(2 channels) to codec.out (3 channels): channel counts must be equal, or one side mono; "
                + "[[connect]] sections choose others\n")
        #expect(!d.stdout.contains(":0:"))
    }

    @Test func theReadmesExampleConfigurationIsValid() throws {
        let readme = try String(contentsOfFile: repositoryFile("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```toml\n[audio]\n"))
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        let example = String(readme[readme.index(start.lowerBound, offsetBy: 8)..<end.lowerBound])
        #expect(example.contains("from = \"codec.in:1\"\nto = \"codec.out:2\""))
        let s = try Scratch()
        defer { s.remove() }
        let r = try StageboxProcess.run(["check-config", try s.write("readme.toml", example)])
        #expect(r.status == 0 && r.stdout.isEmpty, "\(r.stdout)")
    }

    @Test func theShippedConfigurationsAreValid() throws {
        for file in ["board/sim/stagebox.toml", "board/raspberrypi/stagebox.toml"] {
            let r = try StageboxProcess.run(["check-config", repositoryFile(file)])
            #expect(r.status == 0, "\(file): \(r.stdout)")
        }
    }
}

/// A file of this checkout, found from this source file's location.
func repositoryFile(_ relative: String) -> String {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
        url.deleteLastPathComponent()
    }
    return url.appendingPathComponent(relative).path
}

import Foundation
import StageboxTestSupport
