import Foundation
import Logging
import Synchronization
import StageboxAudioFiles
import StageboxTestSupport
import Testing
@testable import StageboxRecorder

extension RecorderTests {
    /// USB sticks as the recorder meets them: pulled under a mirror's copy, back with a cut
    /// file, and `takes copy`'s verified copies.
    @Suite(.serialized) struct StickTests {
        @Test func aPulledStickFailsItsCopyAtOnceAndTheTakeGoesOn() throws {
            guard let stick = TemporaryMount(sizeKB: 65536) else {
                print("pulled stick: not run (a medium of its own is a tmpfs mount, which needs root)")
                return
            }
            defer { stick.remove() }
            let rig = try Rig("pulled-stick", mirror: stick.path)
            let take = try rig.recorder.start().get()
            rig.run(periods: 200)
            #expect(waitUntil { if case .copying(_, stick.path) = rig.recorder.mirrorState { true } else { false } })
            rig.recorder.mediumGone(stick.path, pulled: true)
            // At once, on the caller's thread: no wait for the mirror's.
            #expect(rig.recorder.mirrorState == .failed(take: take.name, reason: "the stick at \(stick.path) was pulled"))
            rig.run(periods: 300)
            rig.recorder.stop()
            rig.waitForIdle()
            #expect(try AudioFileReader(path: take.files[0]).frames == 500 * 64, "the take on the main medium keeps every frame")
            #expect(rig.recorder.mirrorState == .failed(take: take.name, reason: "the stick at \(stick.path) was pulled"),
                    "the reason shown is the pull, not what the mirror's thread met after it")
        }

        @Test func aStickBackAfterAPullHasItsCutTakeRepairedAndAnUnfinishedCopyRemoved() throws {
            let rig = try Rig("stick-back")
            let take = try rig.recorder.start().get()
            rig.run(periods: 300)
            rig.recorder.stop()
            rig.waitForIdle()
            let stick = try temporaryDirectory("stick")
            let folder = stick + "/" + Recorder.stickFolder
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let name = String(take.files[0].split(separator: "/").last!)
            let cut = folder + "/" + name
            try FileManager.default.copyItem(atPath: take.files[0], toPath: cut)
            try appendBytes(cut, [UInt8](repeating: 7, count: 6 * 100 + 4)) // 100 frames the header does not count, and a torn one
            _ = FileManager.default.createFile(atPath: folder + "/other.wav" + Recorder.unfinishedCopySuffix, contents: Data([1, 2, 3]))
            let done = rig.recorder.mediumMounted(stick)
            #expect(done.count == 2, "\(done)")
            #expect(done.contains { $0.contains("unfinished copy, removed") })
            #expect(done.contains { $0.contains("repaired: the header said \(300 * 64) frames, the file holds \(300 * 64 + 100)") })
            #expect(!FileManager.default.fileExists(atPath: folder + "/other.wav" + Recorder.unfinishedCopySuffix))
            #expect(soxFrames(cut) == 300 * 64 + 100)
            #expect(rig.recorder.mediumMounted(stick).isEmpty, "a second look finds nothing to do")
        }

        private func copier() -> TakeCopier { TakeCopier(logger: Logger(label: "copy-test")) }

        private func waitForCopy(_ copier: TakeCopier) -> TakeCopier.State {
            #expect(waitUntil { !copier.isCopying })
            return copier.current
        }

        @Test func takesCopiedAreVerifiedWholeAndNotCopiedTwice() throws {
            let rig = try Rig("copy-source")
            var names: [String] = []
            for _ in 0..<3 {
                let take = try rig.recorder.start().get()
                rig.run(periods: 200)
                rig.recorder.stop()
                rig.waitForIdle()
                names.append(String(take.files[0].split(separator: "/").last!))
            }
            let target = try temporaryDirectory("copy-target") + "/takes"
            let missing = TakeCopier.missing(from: rig.directory, into: target)
            #expect(missing.map(\.name) == names)
            let c = copier()
            #expect(c.start(missing, from: rig.directory, into: target) { _ in } == nil)
            guard case let .finished(copied, bytes, _, into) = waitForCopy(c) else { Issue.record("\(c.current)"); return }
            #expect(copied == 3 && into == target && bytes == missing.reduce(0) { $0 + $1.bytes })
            for name in names {
                #expect(FileManager.default.contents(atPath: target + "/" + name) == FileManager.default.contents(atPath: rig.directory + "/" + name))
            }
            #expect(TakeCopier.missing(from: rig.directory, into: target).isEmpty)
            #expect(!(try FileManager.default.contentsOfDirectory(atPath: target)).contains { $0.hasSuffix(Recorder.unfinishedCopySuffix) })
            // A copy cut short (a pull, a power cut before the rename) is copied again.
            try FileManager.default.removeItem(atPath: target + "/" + names[1])
            _ = FileManager.default.createFile(atPath: target + "/" + names[1], contents: Data([0x52, 0x49]))
            #expect(TakeCopier.missing(from: rig.directory, into: target).map(\.name) == [names[1]])
        }

        @Test func aStickTooSmallEndsTheCopyWithWhatFitAndNoHalfFile() throws {
            guard let stick = TemporaryMount(sizeKB: 200) else {
                print("a full stick: not run (mounting a small tmpfs needs root)")
                return
            }
            defer { stick.remove() }
            let rig = try Rig("copy-full")
            for _ in 0..<3 {
                _ = try rig.recorder.start().get()
                rig.run(periods: 400) // 25.6k frames of PCM_24 stereo: 154 kB a take
                rig.recorder.stop()
                rig.waitForIdle()
            }
            let missing = TakeCopier.missing(from: rig.directory, into: stick.path)
            let c = copier()
            #expect(c.start(missing, from: rig.directory, into: stick.path) { _ in } == nil)
            guard case .failed(let why) = waitForCopy(c) else { Issue.record("\(c.current)"); return }
            #expect(why.contains("is full") && why.contains("1 of 3 takes copied before it"), "\(why)")
            let left = try FileManager.default.contentsOfDirectory(atPath: stick.path)
            #expect(left == [missing[0].name], "the whole first take and nothing of the second: \(left)")
        }

        @Test func aSecondCopyWhileOneRunsIsRefused() throws {
            let c = copier()
            let source = try temporaryDirectory("copy-busy")
            let size = Emulation.scaled(8 << 20) // still copying when the second start comes, even on x86_64
            _ = FileManager.default.createFile(atPath: source + "/a.wav", contents: Data(repeating: 1, count: size))
            let target = try temporaryDirectory("copy-busy-target")
            #expect(c.start([("a.wav", UInt64(size))], from: source, into: target) { _ in } == nil)
            #expect(c.start([("a.wav", UInt64(size))], from: source, into: target) { _ in } == "a copy is already running")
            _ = waitForCopy(c)
        }

        @Test func crc32IsTheIEEEOne() {
            var crc = CRC32()
            Array("123456789".utf8).withUnsafeBytes { crc.update($0) }
            #expect(crc.value == 0xCBF4_3926)
        }
    }
}

extension RecorderTests.StickTests {
    @Test func aCopyWaitsWhileATakeRecordsAndStopsWhenItsStickGoes() throws {
        let source = try temporaryDirectory("copy-wait")
        for name in ["a.wav", "b.wav"] {
            let size = Emulation.scaled(4 << 20)
            _ = FileManager.default.createFile(atPath: source + "/" + name, contents: Data(repeating: 2, count: size))
        }
        let stick = try temporaryDirectory("copy-wait-stick")
        let target = stick + "/takes"
        let recording = Flag(true)
        let c = TakeCopier(logger: Logger(label: "copy-test"))
        #expect(c.start(TakeCopier.missing(from: source, into: target), from: source, into: target,
                        waitWhile: { recording.value }) { _ in } == nil)
        usleep(300_000)
        guard case let .copying(done, _, bytesDone, _, _) = c.current else { Issue.record("\(c.current)"); return }
        #expect(done == 0 && bytesDone == 0, "nothing copied while the take records")
        c.cancel(onto: "/elsewhere", because: "another stick went")
        usleep(100_000)
        #expect(c.isCopying, "a stick that is not the copy's changes nothing")
        c.cancel(onto: stick, because: "the stick at \(stick) was pulled")
        #expect(waitUntil { !c.isCopying })
        guard case .failed(let why) = c.current else { Issue.record("\(c.current)"); return }
        #expect(why.contains("was pulled") && why.contains("0 of 2 takes copied before it"), "\(why)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []
        #expect(left.isEmpty, "no unfinished file left: \(left)")
        // The take over, a new copy goes through.
        recording.value = false
        #expect(c.start(TakeCopier.missing(from: source, into: target), from: source, into: target,
                        waitWhile: { recording.value }) { _ in } == nil)
        #expect(waitUntil { !c.isCopying })
        guard case .finished(2, _, _, _) = c.current else { Issue.record("\(c.current)"); return }
    }
}

/// A Bool the test sets and a copier's thread reads.
final class Flag: Sendable {
    private let stored: Mutex<Bool>
    init(_ value: Bool) { stored = Mutex(value) }
    var value: Bool {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
