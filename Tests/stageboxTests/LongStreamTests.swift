import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The sequence `examples/c/send_sequence.c` sends: x = x * 1664525 + 1013904223 from x = 99,
/// each 16-bit sample the top half.
struct LCGSequence {
    var x: UInt32 = 99
    mutating func next() -> Int16 {
        x = x &* 1_664_525 &+ 1_013_904_223
        return Int16(truncatingIfNeeded: x >> 16)
    }
}

/// Where a recording of the sequence stops matching it, streamed block by block (the files are
/// far too long to hold as arrays of Float): nil when every one of `frames` frames matches,
/// after leading silence.
func firstMismatch(recording path: String, frames: Int, channels: Int = 2) throws -> String? {
    let reader = try AudioFileReader(path: path)
    let block = 65536
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
    defer { buffer.deallocate() }
    var sequence = LCGSequence()
    var matched = 0, started = false, position = 0
    while matched < frames {
        let n = try reader.read(into: buffer, frames: block)
        if n == 0 { return "the recording ends after \(matched) of \(frames) frames" }
        for i in 0..<(n * channels) {
            let s = Int16(max(-32768, min(32767, (buffer[i] * 32768).rounded())))
            if !started {
                if s == 0 { continue }
                started = true
            }
            if matched >= frames { break }
            let e = sequence.next()
            if s != e { return "frame \(matched) (file frame \(position + i / channels)): \(s) instead of \(e)" }
            if i % channels == channels - 1 { matched += 1 }
        }
        position += n
    }
    return nil
}

/// Writes `seconds` of the sequence as a 48 kHz 16-bit stereo WAV (what `firstMismatch` checks).
func writeSequence(to path: String, seconds: Int) throws {
    let writer = try AudioFileWriter(path: path, sampleRate: 48000, channels: 2, encoding: .pcm16)
    var sequence = LCGSequence()
    var block = [Float](repeating: 0, count: 48000 * 2)
    for _ in 0..<seconds {
        for i in 0..<block.count { block[i] = Float(sequence.next()) / 32768 }
        try writer.write(block)
    }
    try writer.close()
}

@Suite(.serialized) struct LongStreamTests {
    /// Five minutes of 48 kHz 16-bit stereo, played by `stagebox play` from a WAV and by the C
    /// library's `send_sequence` at the same time, each into its own `stagebox record`: both
    /// recordings are bit-exact from the first frame to the last. The board runs 4× faster than
    /// real time; the clients are paced by the bus, as people's players are.
    @Test func fiveMinutesArriveBitExactThroughSwiftAndC() throws {
        let frames = 5 * 60 * 48000
        let program = try CExamples.build("send_sequence")
        defer { try? FileManager.default.removeItem(atPath: program) }
        let board = try SimulatedBoard(speed: 4)
        let s = board.scratch
        var log = ""
        defer { _ = log }

        let input = s.path("five-minutes.wav")
        try writeSequence(to: input, seconds: frames / 48000)

        // Long enough for both streams and a late start on a busy machine; stopped by the test.
        let recorders = try ["swift", "c"].map {
            try board.start(["record", s.path("\($0).wav"), "--port", "rec\($0).in", "--encoding", "PCM_16",
                             "--seconds", "400"])
        }
        #expect(eventually(30) { (try? board.stagebox(["ports"]).stdout.contains("recc.in")) == true })
        #expect(eventually(30) { (try? board.stagebox(["ports"]).stdout.contains("recswift.in")) == true })
        let started = Date()
        let watch = StallWatch()
        let play = try board.start(["play", input, "--port", "player.out", "--to", "recswift.in"])
        let c = Process()
        c.executableURL = URL(fileURLWithPath: program)
        c.arguments = [board.socket, "recc.in", "\(frames)"]
        c.standardOutput = Pipe()
        c.standardError = Pipe()
        try c.run()
        play.waitUntilExit()
        c.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        let played = output(of: play), sent = output(of: c)
        #expect(play.terminationStatus == 0, "\(played.stderr)")
        #expect(played.stdout.contains("played \(frames) frames"), "\(played.stdout)")
        #expect(c.terminationStatus == 0, "\(sent.stdout) \(sent.stderr)")
        // Both end as soon as the bus has taken their last frame: 300 s of audio at 4× is 75 s.
        #expect(seconds < 300, "the players took \(seconds) s") // not stuck: 75 s when the machine is free
        usleep(500_000)
        for r in recorders { r.interrupt(); r.waitUntilExit() }
        // At 4× a client's ring is 85 ms of the machine's time: the clients (normal priority,
        // as people's are) are judged to the frame where the machine kept running.
        // Where no client lost a frame (the C sender and its recorder count), the recording must be
        // bit-exact whatever the machine did: that is logic, and always judged.
        let stalls = watch.finish()
        print(StallWatch.report(stalls, "five minutes at 4×"))
        let senderWhole = sent.stdout.contains("underruns 0, overruns 0")
        if stalls.isEmpty { #expect(senderWhole, "\(sent.stdout)") }
        for (name, r) in zip(["swift", "c"], recorders) {
            let out = output(of: r).stdout
            #expect(r.terminationStatus == 0)
            let mismatch = try firstMismatch(recording: s.path("\(name).wav"), frames: frames)
            // `play` counts no underruns: its stream is judged where the machine kept running.
            let whole = name == "c" && senderWhole && out.contains("underruns 0, overruns 0")
            if stalls.isEmpty { #expect(out.contains("underruns 0, overruns 0"), "\(name): \(out)") }
            if stalls.isEmpty || whole { #expect(mismatch == nil, "\(name): \(out)") }
            print("long stream, \(name): \(out.trimmingCharacters(in: .whitespacesAndNewlines)); " + (mismatch ?? "bit-exact"))
        }
        log = board.stop()
        print("long stream: \(frames) frames (300 s) through Swift and C at 4× in \(Int(seconds)) s")
    }
}

extension LongStreamTests {
    /// `play` of a file at another rate ends as soon as the bus has taken its last frame (the
    /// converter flushed, the last partial period taken at once), and every frame is played:
    /// the recording holds 20 s of the tone at 48 kHz, at its pitch.
    @Test(arguments: [44100, 16000])
    func playEndsWhenItsLastFrameIsOnTheBus(rate: Int) throws {
        let speed = 4.0, seconds = 20
        let board = try SimulatedBoard(speed: speed)
        let s = board.scratch
        var log = ""
        defer { _ = log }
        let input = s.path("tone-\(rate).wav")
        let writer = try AudioFileWriter(path: input, sampleRate: rate, channels: 1, encoding: .float32)
        let tone = (0..<(seconds * rate)).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        try writer.write(tone)
        try writer.close()
        let recorder = try board.start(["record", s.path("out.wav"), "--port", "rec.in", "--channels", "1",
                                        "--seconds", "\(seconds + 10)"])
        #expect(eventually(30) { (try? board.stagebox(["ports"]).stdout.contains("rec.in")) == true })
        let started = Date()
        let watch = StallWatch()
        let play = try board.stagebox(["play", input, "--port", "player.out", "--to", "rec.in"])
        let took = Date().timeIntervalSince(started)
        #expect(play.status == 0, "\(play.stderr)")
        recorder.waitUntilExit()
        let stalls = watch.finish()
        print(StallWatch.report(stalls, "play at \(rate) Hz"))
        let samples = try AudioFileReader(path: s.path("out.wav")).readAll()
        let loud = samples.indices.filter { abs(samples[$0]) > 0.001 }
        let span = (loud.last ?? 0) - (loud.first ?? 0) + 1
        let middle = Array(samples[(loud.first ?? 0) + 4800..<(loud.last ?? 0) - 4800])
        let crossings = (1..<middle.count).filter { middle[$0 - 1] < 0 && middle[$0] >= 0 }.count
        let pitch = Double(crossings) / (Double(middle.count) / 48000)
        // Judged where the machine kept running: a starved player leaves a gap in the tone.
        if stalls.isEmpty {
            // 20 s of audio at 4× is 5 s; a player waiting for frames stuck in its converter
            // took its drain timeout (5 s) on top.
            #expect(took < Double(seconds) / speed + 3, "play took \(took) s")
            #expect(abs(span - seconds * 48000) < 100, "\(span) frames of tone, not \(seconds * 48000)")
            #expect(abs(pitch - 440) < 0.2, "pitch \(pitch) Hz")
        }
        log = board.stop()
        print("play at \(rate) Hz: \(span) frames in \(String(format: "%.2f", took)) s at \(speed)×, pitch \(String(format: "%.3f", pitch)) Hz")
    }
}
