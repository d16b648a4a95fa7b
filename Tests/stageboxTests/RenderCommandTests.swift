import StageboxTestSupport
import Foundation
import StageboxAudioFiles
import Testing

@Suite struct RenderCommandTests {
    @Test func passthroughRenderGivesTheInputBack() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("r.toml", "[audio]\nperiod = 64\n")
        // 1000 frames: not a multiple of 64.
        let input: [Float] = (0..<2000).map { (i: Int) -> Float in Float((i * 31) % 4096 - 2048) / 32768 }
        let w = try AudioFileWriter(path: s.path("in.wav"), sampleRate: 48000, channels: 2, encoding: .pcm24)
        try w.write(input)
        try w.close()
        let r = try StageboxProcess.run(["render", "--config", config, "--input", s.path("in.wav"), "--output", s.path("out.wav")])
        #expect(r.status == 0, "\(r.stderr)")
        let out = try AudioFileReader(path: s.path("out.wav"))
        #expect(out.frames == 1000 && out.channels == 2 && out.encoding == .pcm24)
        #expect(firstDifference(try out.readAll(), input) == nil)
    }

    @Test func renderMixesTheToneAndMapsChannels() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("r.toml", """
            [audio]
            inputs = 1
            outputs = 2
            period = 128

            [tone]
            signal = "sine"
            frequency = 1000
            level_db = -6

            [[connect]]
            from = "codec.in"
            to = "codec.out"

            [[connect]]
            from = "tone"
            to = "codec.out"
            """)
        let w = try AudioFileWriter(path: s.path("in.wav"), sampleRate: 48000, channels: 1, encoding: .float32)
        try w.write([Float](repeating: 0.25, count: 4800))
        try w.close()
        let r1 = try StageboxProcess.run(["render", "--config", config, "--input", s.path("in.wav"), "--output", s.path("a.wav")])
        let r2 = try StageboxProcess.run(["render", "--config", config, "--input", s.path("in.wav"), "--output", s.path("b.wav")])
        #expect(r1.status == 0 && r2.status == 0)
        let a = try AudioFileReader(path: s.path("a.wav")).readAll()
        #expect(firstDifference(a, try AudioFileReader(path: s.path("b.wav")).readAll()) == nil, "deterministic")
        #expect(a.count == 9600)
        let left = stride(from: 0, to: a.count, by: 2).map { a[$0] }
        let right = stride(from: 1, to: a.count, by: 2).map { a[$0] }
        #expect(firstDifference(left, right) == nil, "mono copied to both channels")
        // DC 0.25 plus a sine of amplitude 0.5: peaks near 0.75 and -0.25.
        #expect(abs(left.max()! - 0.75) < 0.01 && abs(left.min()! + 0.25) < 0.01)
    }

    @Test func badInputsGiveClearErrors() throws {
        let s = try Scratch()
        defer { s.remove() }
        let config = try s.write("r.toml", "[audio]\ninputs = 2\n")
        let missing = try StageboxProcess.run(["render", "--config", config, "--input", s.path("none.wav"), "--output", s.path("o.wav")])
        #expect(missing.status == 1 && missing.stderr.contains(s.path("none.wav")))
        let w = try AudioFileWriter(path: s.path("mono.wav"), sampleRate: 48000, channels: 1, encoding: .pcm16)
        try w.write([0, 0, 0])
        try w.close()
        let mono = try StageboxProcess.run(["render", "--config", config, "--input", s.path("mono.wav"), "--output", s.path("o.wav")])
        #expect(mono.status == 1)
        #expect(mono.stderr.contains("has 1 channels; the configuration's [audio] inputs is 2"), "\(mono.stderr)")
        let text = try s.write("t.wav", "RIFF but not really")
        let bad = try StageboxProcess.run(["render", "--config", config, "--input", text, "--output", s.path("o.wav")])
        #expect(bad.status == 1 && bad.stderr.contains(text))
    }
}
