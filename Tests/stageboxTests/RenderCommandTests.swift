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
        let w = try AudioFileWriter(path: s.path("three.wav"), sampleRate: 48000, channels: 3, encoding: .pcm16)
        try w.write([0, 0, 0])
        try w.close()
        let three = try StageboxProcess.run(["render", "--config", config, "--input", s.path("three.wav"), "--output", s.path("o.wav")])
        #expect(three.status == 1)
        #expect(three.stderr.contains("has 3 channels; the configuration's [audio] inputs is 2"), "\(three.stderr)")
        let text = try s.write("t.wav", "RIFF but not really")
        let bad = try StageboxProcess.run(["render", "--config", config, "--input", text, "--output", s.path("o.wav")])
        #expect(bad.status == 1 && bad.stderr.contains(text))
        // Without --config the input is read twice (its rate and channels first): not a stream.
        let piped = try StageboxProcess.run(["render", "--input", "/dev/null", "--output", s.path("o.wav")])
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("/dev/null: is a pipe or a device, which render reads once only; give --config"), "\(piped.stderr)")
    }

    @Test func refusesToRenderOverItsInput() throws {
        let s = try Scratch()
        defer { s.remove() }
        let samples: [Float] = (0..<960).map { Float($0 % 64) / 128 }
        let w = try AudioFileWriter(path: s.path("in.wav"), sampleRate: 48000, channels: 2, encoding: .pcm16)
        try w.write(samples)
        try w.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: s.path("in.wav")))
        try FileManager.default.createSymbolicLink(atPath: s.path("link.wav"), withDestinationPath: s.path("in.wav"))
        for output in [s.path("in.wav"), s.path("link.wav"), s.url.path + "/./in.wav"] {
            let r = try StageboxProcess.run(["render", "--input", s.path("in.wav"), "--output", output])
            #expect(r.status == 1 && r.stderr.contains("is the input file"), "\(output): \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.path("in.wav"))) == before, "the input is untouched")
    }

    /// A render that fails leaves the output as it was and no temporary file behind.
    @Test func aFailedRenderLeavesTheOutputAsItWas() throws {
        let s = try Scratch()
        defer { s.remove() }
        let old = try s.write("out.wav", "an older take")
        let w = try AudioFileWriter(path: s.path("five.wav"), sampleRate: 48000, channels: 5, encoding: .pcm16)
        try w.write([Float](repeating: 0.1, count: 5 * 480))
        try w.close()
        let config = try s.write("r.toml", "[audio]\ninputs = 2\n")
        let r = try StageboxProcess.run(["render", "--config", config, "--input", s.path("five.wav"), "--output", old])
        #expect(r.status == 1)
        #expect(try String(contentsOfFile: old, encoding: .utf8) == "an older take")
        let left = try FileManager.default.contentsOfDirectory(atPath: s.url.path).filter { $0.hasSuffix(".rendering") }
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    /// Without --config: a FLAC (made by sox) becomes a WAV with the same samples. The static
    /// appliance binary's libsndfile is built without codec libraries: it reads WAV, AIFF and
    /// the other formats libsndfile has built in, not FLAC (README).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STAGEBOX_BINARY"] == nil,
                   "the static binary's libsndfile has no FLAC"))
    func readsFlacWithoutAConfiguration() throws {
        let s = try Scratch()
        defer { s.remove() }
        let flac = s.path("in.flac")
        try runSox(["-n", "-r", "44100", "-c", "1", "-b", "16", flac, "synth", "0.5", "sine", "1000", "vol", "0.5"])
        let r = try StageboxProcess.run(["render", "--input", flac, "--output", s.path("out.wav")])
        #expect(r.status == 0, "\(r.stderr)")
        let input = try AudioFileReader(path: flac)
        let out = try AudioFileReader(path: s.path("out.wav"))
        #expect(out.sampleRate == 44100 && out.channels == 1 && out.encoding == .pcm16 && out.frames == 22050)
        #expect(firstDifference(try out.readAll(), try input.readAll()) == nil, "bit-exact")
    }

    /// An 8-bit AIFF at 22.05 kHz into a 48 kHz stereo configuration: the rate is converted
    /// (the length and the tone's pitch agree) and mono goes to both outputs.
    @Test func convertsRateAndChannels() throws {
        let s = try Scratch()
        defer { s.remove() }
        let aiff = s.path("in.aiff")
        try runSox(["-n", "-r", "22050", "-c", "1", "-b", "8", aiff, "synth", "1", "sine", "500", "vol", "0.5"])
        let config = try s.write("r.toml", "[audio]\nrate = 48000\ninputs = 2\noutputs = 2\n")
        let r = try StageboxProcess.run(["render", "--config", config, "--input", aiff, "--output", s.path("out.wav")])
        #expect(r.status == 0, "\(r.stderr)")
        let out = try AudioFileReader(path: s.path("out.wav"))
        #expect(out.sampleRate == 48000 && out.channels == 2)
        #expect(abs(out.frames - 48000) <= 2, "\(out.frames) frames for one second")
        let samples = try out.readAll()
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
        #expect(firstDifference(left, right) == nil)
        // 500 Hz for one second: 1000 sign changes (±2 for the edges).
        let crossings = zip(left.dropFirst(200), left.dropFirst(201)).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(crossings - 1000 * (48000 - 200) / 48000) <= 3, "\(crossings) zero crossings")
        #expect(abs((left.max() ?? 0) - 0.5) < 0.02)
    }

    private func runSox(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        p.arguments = arguments
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "sox \(arguments)")
    }
}
