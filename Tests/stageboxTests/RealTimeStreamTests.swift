import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing

/// Thirty seconds through a board that keeps real time: the run `tools/test` repeats with the
/// aarch64 binary under qemu-user (STAGEBOX_BINARY), where the board, `play` and `record` are
/// all emulated aarch64 processes on the bus's socket and shared memory. No dropout and every
/// frame bit-exact are judged when the machine itself did not stall meanwhile (`StallWatch`).
@Suite(.serialized) struct RealTimeStreamTests {
    @Test func thirtySecondsPlayedIntoRecordArriveBitExact() throws {
        let frames = 30 * 48000
        let board = try SimulatedBoard()
        let s = board.scratch
        var log = ""
        defer { _ = log }

        let input = s.path("thirty-seconds.wav")
        try writeSequence(to: input, seconds: 30)

        // Stopped by the test once the player is done: room for a slow start under emulation.
        let recorder = try board.start(["record", s.path("out.wav"), "--port", "rec.in", "--encoding", "PCM_16",
                                        "--seconds", "120"])
        #expect(eventually(20) { (try? board.stagebox(["ports"]).stdout.contains("rec.in")) == true })
        let watch = StallWatch()
        let started = Date()
        let play = try board.start(["play", input, "--port", "player.out", "--to", "rec.in"])
        play.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        let played = output(of: play)
        #expect(play.terminationStatus == 0, "\(played.stderr)")
        #expect(played.stdout.contains("played \(frames) frames"), "\(played.stdout)")
        // Paced by the board's clock: never faster than real time.
        #expect(seconds > 29.5, "30 s of audio played in \(seconds) s")
        usleep(500_000)
        recorder.interrupt()
        recorder.waitUntilExit()
        let stalls = watch.finish()
        let recorded = output(of: recorder).stdout
        #expect(recorder.terminationStatus == 0)
        let mismatch = try firstMismatch(recording: s.path("out.wav"), frames: frames)
        print(StallWatch.report(stalls, "real-time stream") + "; \(recorded)")
        if stalls.isEmpty {
            #expect(recorded.contains("underruns 0, overruns 0"), "\(recorded)")
            #expect(mismatch == nil)
        }
        log = board.stop()
        print("real-time stream: \(frames) frames (30 s), \(mismatch == nil ? "bit-exact" : "first difference at frame \(mismatch!)"), "
              + "played in \(Int(seconds.rounded())) s")
    }
}
