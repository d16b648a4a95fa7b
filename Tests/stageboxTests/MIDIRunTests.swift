import StageboxTestSupport
import Foundation
import Testing

/// `[midi]` in `stagebox run` where there may be no sequencer (containers have no /dev/snd/seq).
@Suite struct MIDIRunTests {
    @Test func withoutASequencerStageboxRunsWithoutMIDIAndSaysWhy() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("midi.toml", """
            [audio]
            rt_priority = 0

            [midi]
            connect = "all"

            [[midi.map]]
            note = 36
            channel = 10
            press = "mute"
            """)
        let r = try StageboxProcess.run(["run", "--simulate", "--config", config, "--frames", "4800"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("frames=4800 "), "\(r.stdout)")
        if FileManager.default.fileExists(atPath: "/dev/snd/seq") {
            #expect(r.stderr.contains("midi: sequencer client "), "\(r.stderr)")
        } else {
            #expect(r.stderr.contains("midi: opening the ALSA sequencer (/dev/snd/seq; is snd-seq loaded?): "), "\(r.stderr)")
            #expect(r.stderr.contains("; running without MIDI"), "\(r.stderr)")
        }
    }

    @Test func aBadMapEntryIsAProblemAtItsLine() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("midi.toml", "[[midi.map]]\nnote = 36\nchannel = 17\npress = \"mute\"\n")
        let r = try StageboxProcess.run(["check-config", config])
        #expect(r.status != 0)
        #expect((r.stdout + r.stderr).contains("\(config):3: midi.map[1].channel: 17 is out of range (allowed: 1–16 or \"any\")"),
                "\(r.stdout)\(r.stderr)")
    }
}

/// The README's `[midi]` example, as written.
@Suite struct MIDIReadmeTests {
    @Test func theReadmesMIDIExampleIsValid() throws {
        let readme = try String(contentsOfFile: repositoryFile("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```toml\n[midi]\n"))
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        let example = String(readme[readme.index(start.lowerBound, offsetBy: 8)..<end.lowerBound])
        #expect(example.contains("cc = 64 "))
        let s = try Scratch()
        defer { s.remove() }
        let r = try StageboxProcess.run(["check-config", try s.write("readme.toml", example)])
        #expect(r.status == 0 && r.stdout.isEmpty, "\(r.stdout)")
    }

    @Test func withoutMIDISectionNoSequencerIsOpened() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("plain.toml", "[audio]\nrt_priority = 0\n")
        let r = try StageboxProcess.run(["run", "--simulate", "--config", config, "--frames", "2400"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("midi:"), "\(r.stderr)")
    }
}
