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
