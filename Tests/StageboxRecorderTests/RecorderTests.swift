import Foundation
import Logging
import StageboxAudioFiles
import StageboxEngine
import StageboxTestSupport
import Testing
@testable import StageboxRecorder
import StageboxSystem

/// The recorder around a real engine, its periods run by the test as a driver would run them.
@Suite(.serialized) struct RecorderTests {
    final class Rig {
        let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2,
                                                     toneSignal: .silence, toneFrequency: 1000, toneLevelDB: -20))
        let recorder: Recorder
        let directory: String
        private let ownsDirectory: Bool
        var position: Int64 = 0
        /// Every frame the codec inputs carried, interleaved.
        var history: [Float] = []

        init(_ name: String, preRoll: Double = 0, ringSeconds: Double = 5, minFreeMB: Int = 0, directory: String? = nil,
             sources: [String] = ["codec.in"], mirror: String = "", timeTrusted: Bool = true,
             splitThreshold: UInt64? = nil) throws {
            self.directory = try directory ?? temporaryDirectory(name)
            ownsDirectory = directory == nil
            var settings = RecorderSettings(directory: self.directory, sources: sources, encoding: .pcm24,
                                            sampleRate: 48000, syncIntervalMs: 100, preRollSeconds: preRoll,
                                            minFreeMB: minFreeMB, ringSeconds: ringSeconds, mirror: mirror)
            settings.timeTrusted = { timeTrusted }
            settings.splitThreshold = splitThreshold
            recorder = Recorder(settings: settings, engine: engine, logger: Logger(label: "test"))
            recorder.syncTaps()
            try recorder.startWriter()
        }

        /// Runs `count` periods of a signal that never repeats (multiples of 2^-23: PCM_24 holds them).
        func run(periods count: Int) {
            for _ in 0..<count {
                for c in 0..<2 {
                    let p = engine.captureBuffer.channel(c)
                    for i in 0..<64 { p[i] = Float((Int(position) + i) * (c == 0 ? 7 : -13) % 8_388_608) / 8_388_608 }
                }
                for i in 0..<64 { for c in 0..<2 { history.append(engine.captureBuffer.channel(c)[i]) } }
                engine.process(frames: 64, cycle: CycleInfo(framePosition: position, hostTimeNanos: monotonicNanoseconds(), sampleRate: 48000))
                position += 64
            }
        }

        func waitForIdle() {
            let deadline = Date().addingTimeInterval(10)
            while recorder.isRecording && Date() < deadline { usleep(2000) }
        }

        deinit {
            recorder.shutdown()
            if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
        }
    }

    @Test func aTakeHoldsEveryFrameBetweenStartAndStopBitExact() throws {
        let rig = try Rig("take")
        #expect(!rig.engine.ports.contains { $0.name.hasPrefix("stagebox.record.") }, "no taps between takes")
        rig.run(periods: 100)
        let take = try rig.recorder.start().get()
        #expect(rig.recorder.isRecording)
        #expect(rig.engine.ports.contains { $0.name == "stagebox.record.codec.in" && $0.kind == .receiver })
        let before = rig.history.count
        rig.run(periods: 1500) // 2 s
        #expect(rig.recorder.stop())
        rig.waitForIdle()
        #expect(rig.recorder.status.state == .idle)
        let path = try #require(take.files.first)
        #expect(path.hasSuffix("_0001_codec.in.wav"))
        let reader = try AudioFileReader(path: path)
        // The take begins once its tap's new connection has faded in: one period after the start.
        #expect(reader.frames == 1499 * 64)
        #expect(firstDifference(try reader.readAll(), Array(rig.history[(before + 64 * 2)...])) == nil)
        #expect(soxFrames(path) == 1499 * 64)
        rig.recorder.syncTaps()
        #expect(!rig.engine.ports.contains { $0.name.hasPrefix("stagebox.record.") }, "the tap leaves with the take")
        let latency = try #require(rig.recorder.status.startLatencyMs)
        #expect(latency >= 0 && latency < 10_000)
        let last = try #require(rig.recorder.recentTakes.last)
        #expect(last.frames == 1499 * 64 && last.note == nil)
    }

    /// The slate goes into each take's iXML and bext, as wavinfo (nobody here wrote it) reads
    /// them; a take moves the take number on and uses up the note; a new scene counts from 1.
    @Test func theSlateIsInEveryTakesIXMLAndBext() throws {
        let rig = try Rig("slate")
        rig.recorder.slate.setProject("Night & Day")
        rig.recorder.slate.setScene("12A")
        rig.recorder.slate.setTake(3)
        rig.recorder.slate.setTape("D1")
        rig.recorder.slate.setNote("a plane <passes>")
        rig.run(periods: 50)
        let first = try rig.recorder.start().get()
        rig.run(periods: 200)
        rig.recorder.stop()
        rig.waitForIdle()
        #expect(rig.recorder.slate.current == Slate.Fields(project: "Night & Day", scene: "12A", take: 4, tape: "D1", note: ""))
        let firstFile = try #require(first.files.first)
        // Under qemu-user (tools/cross/test) the chroot has no wavinfo: the x86_64 run reads them.
        if ProcessInfo.processInfo.environment["STAGEBOX_UNDER_QEMU"] == "1" {
            print("the slate's iXML read by wavinfo: not run under qemu-user (the x86_64 run reads it)")
            #expect(TakeRepair.check(firstFile) == .intact(frames: 199 * 64))
            return
        }
        let info = try #require(wavinfoMetadata(firstFile), "wavinfo read nothing (tools/setup installs it)")
        #expect(info["project"] as? String == "Night & Day" && info["scene"] as? String == "12A")
        #expect(info["take"] as? String == "3" && info["tape"] as? String == "D1" && info["note"] as? String == "a plane <passes>")
        #expect(info["tracks"] as? [String] == ["codec.in 1", "codec.in 2"])
        #expect(info["description"] as? String == "Stagebox take 1 of codec.in; scene 12A take 3: a plane <passes>")
        #expect(info["frames"] as? Int == 199 * 64)
        let reference = try #require(info["time_reference"] as? Int)
        #expect(info["ixml_lo"] as? String == String(reference & 0xFFFF_FFFF), "iXML and bext place the take alike")

        rig.recorder.slate.setScene("13")
        let second = try rig.recorder.start().get()
        rig.run(periods: 100)
        rig.recorder.stop()
        rig.waitForIdle()
        let secondFile = try #require(second.files.first)
        let next = try #require(wavinfoMetadata(secondFile))
        #expect(next["scene"] as? String == "13" && next["take"] as? String == "1" && next["note"] as? String == "")
    }

    /// A take made while NTP or an RTC had not set the clock says so in bext and in `takes`.
    @Test func aTakeWithoutATrustedClockSaysSo() throws {
        let rig = try Rig("untrusted", timeTrusted: false)
        rig.run(periods: 50)
        let take = try rig.recorder.start().get()
        rig.run(periods: 100)
        rig.recorder.stop()
        rig.waitForIdle()
        #expect(rig.recorder.recentTakes.last?.note == "time not confirmed: the clock was not set by NTP or an RTC")
        let file = try #require(take.files.first)
        let bytes = try #require(FileManager.default.contents(atPath: file))
        let text = String(decoding: bytes.prefix(2048), as: UTF8.self)
        #expect(text.contains("Stagebox take 1 of codec.in (time not confirmed: the clock was not set by NTP or an RTC)"))
    }

    @Test func preRollBringsTheSecondsBeforeTheStart() throws {
        let rig = try Rig("preroll", preRoll: 0.25)
        rig.run(periods: 500)
        let start = rig.history.count
        let take = try rig.recorder.start().get()
        rig.run(periods: 100)
        rig.recorder.stop()
        rig.waitForIdle()
        let samples = try AudioFileReader(path: take.files[0]).readAll()
        #expect(samples.count == (12000 + 6400) * 2)
        #expect(firstDifference(samples, Array(rig.history[(start - 24000)...])) == nil)
    }

    @Test func aRingThatOverflowsDropsWholePeriodsCountsThemAndMarksACue() throws {
        // A 10 ms ring and 4 s of periods run as fast as the test can: the writer cannot keep up.
        let rig = try Rig("overflow", ringSeconds: 0.01)
        let take = try rig.recorder.start().get()
        rig.run(periods: 3000)
        rig.recorder.stop()
        rig.waitForIdle()
        let dropped = try #require(rig.recorder.recentTakes.last).frames
        let reader = try AudioFileReader(path: take.files[0])
        let lost = 3000 * 64 - reader.frames
        #expect(lost > 0 && lost % 64 == 0)
        #expect(dropped == Int64(reader.frames))
        #expect(!libsndfileCues(take.files[0]).isEmpty)
    }

    /// A disk that stalls (the writer held, as by a write that does not return) for as long as
    /// the ring holds costs nothing; a longer stall drops whole periods, counted and cued.
    @Test func theRingAbsorbsAStallAsLongAsItHolds() throws {
        let rig = try Rig("stall", ringSeconds: 5)
        let take = try rig.recorder.start().get()
        rig.run(periods: 10)
        #expect(waitUntil { rig.recorder.status.take?.frames == 10 * 64 }, "the ring is empty before the stall")
        rig.recorder.shared.withLock { _ in rig.run(periods: 3700) } // 4.93 s while the writer waits
        #expect(waitUntil { rig.recorder.status.take?.frames == 3710 * 64 }, "all of it written after the stall")
        #expect(rig.recorder.status.take?.droppedFrames == 0)
        rig.recorder.shared.withLock { _ in rig.run(periods: 3800) } // 5.07 s: more than the ring
        usleep(200_000)
        rig.recorder.stop()
        rig.waitForIdle()
        let reader = try AudioFileReader(path: take.files[0])
        let dropped = (10 + 3700 + 3800) * 64 - reader.frames
        #expect(dropped > 0 && dropped <= 3800 * 64 - 240_000 + 64)
        #expect(libsndfileCues(take.files[0]).count >= 1)
    }

    @Test func markersBecomeCuePoints() throws {
        let rig = try Rig("markers")
        let take = try rig.recorder.start().get()
        rig.run(periods: 100)
        // The writer has the first 100 periods on disk, then has placed the marker.
        #expect(waitUntil { rig.recorder.status.take?.frames == 100 * 64 })
        #expect(rig.recorder.mark(label: "verse"))
        #expect(waitUntil { rig.recorder.status.take?.markers == 1 })
        rig.run(periods: 100)
        rig.recorder.stop()
        rig.waitForIdle()
        // At the frames written before it: all of the second 100 periods follow it.
        let frames = try AudioFileReader(path: take.files[0]).frames
        #expect(libsndfileCues(take.files[0]) == [UInt32(frames - 100 * 64)])
        #expect(!rig.recorder.mark(label: "after the take"))
    }

    @Test func sequenceNumbersNeverRepeatAcrossRestartsEvenWhenTakesAreDeleted() throws {
        let directory = try temporaryDirectory("sequence")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var names: [String] = []
        for _ in 0..<2 {
            let rig = try Rig("sequence", directory: directory)
            let take = try rig.recorder.start().get()
            rig.run(periods: 10)
            rig.recorder.stop()
            rig.waitForIdle()
            names.append(take.name)
            try FileManager.default.removeItem(atPath: take.files[0])
            rig.recorder.shutdown()
        }
        #expect(names.map { TakeName.sequence(of: $0 + "_x.wav") } == [1, 2])
    }

    @Test func refusalsSayWhy() throws {
        let missing = try Rig("refusals", directory: "/nonexistent/recordings")
        guard case let .failure(refusal) = missing.recorder.start() else { Issue.record("a take started"); return }
        #expect(refusal.reason.hasPrefix("/nonexistent/recordings: "))
        #expect(missing.recorder.status.state == .failed(refusal.reason))
        #expect(missing.engine.ports.count == 4) // the audio runs on; the tap was made for the start

        let full = try Rig("refusals", minFreeMB: 100_000_000)
        guard case let .failure(low) = full.recorder.start() else { Issue.record("a take started"); return }
        #expect(low.reason.hasSuffix("below min_free_mb (100000000)"))
    }

    /// The directory is made when only its last part is missing, never at the top level (a
    /// mount point such as /data that did not mount).
    @Test func theDirectoryIsMadeOnlyBelowAnExistingParent() throws {
        let parent = try temporaryDirectory("parent")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        #expect(TakeDirectory(path: parent + "/takes").makeIfMissing())
        #expect(TakeDirectory(path: parent + "/takes").problem() == nil)
        #expect(!TakeDirectory(path: parent + "/a/b").makeIfMissing())
        #expect(!TakeDirectory(path: "/stagebox-top-level-\(getpid())").makeIfMissing())
        #expect(!FileManager.default.fileExists(atPath: "/stagebox-top-level-\(getpid())"))
    }

    @Test func theStartUpPassRepairsACutTakeAndListsIt() throws {
        let directory = try temporaryDirectory("startup")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let file = try TakeFile(path: directory + "/2026-11-22_1412_0007_codec.in.wav",
                                    format: TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24),
                                    bext: BroadcastInfo(description: "", originatorReference: "", date: "2026-11-22", time: "14:12:00", timeReference: 0))
            let signal = testSignal(frames: 480, channels: 2)
            try signal.withUnsafeBufferPointer { try file.append($0.baseAddress!, frames: 480) }
        }
        let recorder = Recorder(settings: RecorderSettings(directory: directory, sources: ["codec.in"], sampleRate: 48000),
                                engine: Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2)),
                                logger: Logger(label: "test"))
        let found = recorder.repairTakes()
        #expect(found.count == 1)
        #expect(found.first?.frames == 480)
        #expect(found.first?.note?.hasPrefix("repaired: the header said 0 frames, the file holds 480") == true)
        #expect(recorder.repairTakes().first?.note == nil)
        // The next take's number follows the one in the directory.
        #expect(try TakeDirectory(path: directory).nextSequence() == 8)
    }
}

/// Until `condition` holds, for up to 30 s (a loaded machine is slow, never wrong).
func waitUntil(_ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(30)
    while Date() < end {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}
