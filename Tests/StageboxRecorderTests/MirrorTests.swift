import CLinux
import Foundation
import StageboxAudioFiles
import StageboxTestSupport
import Testing
@testable import StageboxRecorder

extension RecorderTests {
    /// The mirror: every take written a second time on another medium, from its own thread.
    @Suite(.serialized) struct MirrorTests {
        private func waitForMirror(_ rig: Rig, _ done: (MirrorState) -> Bool) -> Bool {
            let end = Date().addingTimeInterval(30)
            while Date() < end {
                if done(rig.recorder.mirrorState) { return true }
                usleep(2000)
            }
            return done(rig.recorder.mirrorState)
        }

        @Test func aMirroredTakeIsBitIdenticalOnBothMedia() throws {
            guard let stick = TemporaryMount(sizeKB: 65536) else {
                print("mirrored take: not run (a medium of its own is a tmpfs mount, which needs root)")
                return
            }
            defer { stick.remove() }
            let mirror = stick.path
            let rig = try Rig("mirrored", preRoll: 0.5, mirror: mirror)
            rig.run(periods: 400) // the pre-roll fills
            let take = try rig.recorder.start().get()
            #expect(waitForMirror(rig) { if case .copying = $0 { true } else { false } })
            for block in 0..<10 {
                rig.run(periods: 150)
                usleep(5000)
                if block == 4 {
                    #expect(rig.recorder.mark(label: "verse"))
                    #expect(waitUntil { rig.recorder.status.take?.markers == 1 })
                }
            }
            rig.recorder.stop()
            rig.waitForIdle()
            #expect(waitForMirror(rig) { $0 == .copied(take: take.name, directory: mirror) }, "\(rig.recorder.mirrorState)")
            let main = take.files[0]
            let copy = mirror + "/" + (main.split(separator: "/").last.map(String.init) ?? "")
            let mainBytes = try #require(FileManager.default.contents(atPath: main))
            let copyBytes = try #require(FileManager.default.contents(atPath: copy))
            #expect(try AudioFileReader(path: main).frames == 24000 + 1500 * 64, "the half second of pre-roll and 1500 periods")
            #expect(mainBytes == copyBytes, "the copy is the same file, byte for byte")
            #expect(soxFrames(copy) == 24000 + 1500 * 64)
            #expect(libsndfileCues(copy).count == 1, "the marker is in the copy too")
        }

        @Test func aMirrorThatIsNotThereLeavesTheTakeAloneAndSaysWhy() throws {
            let rig = try Rig("no-mirror", mirror: "/nonexistent-stagebox-stick/takes")
            let take = try rig.recorder.start().get()
            rig.run(periods: 200)
            rig.recorder.stop()
            rig.waitForIdle()
            #expect(rig.recorder.mirrorState == .failed(take: take.name, reason: "/nonexistent-stagebox-stick/takes: No such file or directory"))
            #expect(try AudioFileReader(path: take.files[0]).frames == 200 * 64)
        }

        /// A full mirror medium (a 256 kB tmpfs: under a second of the take) ends the copy,
        /// whole and readable; the take on the main medium goes on and keeps every frame.
        @Test func aFullMirrorEndsItsCopyCleanlyAndTheTakeGoesOn() throws {
            guard let stick = TemporaryMount(sizeKB: 256) else {
                print("mirror on a full medium: not run (mounting a small tmpfs needs root)")
                return
            }
            defer { stick.remove() }
            let mirror = stick.path
            let rig = try Rig("full-mirror-take", mirror: mirror)
            let take = try rig.recorder.start().get()
            for _ in 0..<30 {
                rig.run(periods: 100) // 30 × 0.13 s of PCM_24 stereo: 1.1 MB, more than the 256 kB medium
                usleep(10_000)
            }
            #expect(waitForMirror(rig) { if case .failed = $0 { true } else { false } })
            let state = rig.recorder.mirrorState
            #expect("\(state)".contains("the medium is full"), "\(state)")
            rig.recorder.stop()
            rig.waitForIdle()
            let reader = try AudioFileReader(path: take.files[0])
            #expect(reader.frames == 3000 * 64, "the main take keeps every frame")
            #expect(rig.recorder.recentTakes.last?.note == nil, "the main take ended as asked")
            let copy = mirror + "/" + (take.files[0].split(separator: "/").last.map(String.init) ?? "")
            let copied = try #require(soxFrames(copy), "the cut copy opens in sox")
            #expect(copied > 0 && copied < 3000 * 64)
            // What the copy holds is the take's beginning, exactly.
            let head = try AudioFileReader(path: copy).readAll()
            let whole = try reader.readAll()
            #expect(Array(whole.prefix(head.count)) == head)
        }

        @Test func aDirectoryOnTheRootFilesystemOrTheTakesMediumIsNoMirror() throws {
            let takes = try temporaryDirectory("main")
            let other = try temporaryDirectory("same-medium")
            defer { try? FileManager.default.removeItem(atPath: takes); try? FileManager.default.removeItem(atPath: other) }
            guard case .failure(let refusal)? = MirrorTarget.resolve(other, mainDirectory: takes) else {
                Issue.record("a directory beside the takes was taken as a mirror")
                return
            }
            #expect(refusal.reason.contains("\(other) is on the"), "\(refusal)")
            #expect(MirrorTarget.resolve("/etc/hostname", mainDirectory: takes) == .failure(MirrorRefusal(reason: "/etc/hostname is not a directory")))
            #expect(MirrorTarget.resolve("", mainDirectory: takes) == nil)
            if let stick = TemporaryMount(sizeKB: 1024) {
                defer { stick.remove() }
                #expect(MirrorTarget.resolve(stick.path, mainDirectory: takes) == .success(stick.path))
            }
        }

        /// With two sources, the marker lands in each copy at that file's own frame: the same
        /// bytes as the main files.
        @Test func twoSourcesAndAMarkerAreCopiedFileByFile() throws {
            guard let stick = TemporaryMount(sizeKB: 65536) else {
                print("mirrored take of two sources: not run (needs root for a tmpfs)")
                return
            }
            defer { stick.remove() }
            let rig = try Rig("two-sources", sources: ["codec.in", "tone"], mirror: stick.path)
            let take = try rig.recorder.start().get()
            #expect(take.files.count == 2)
            rig.run(periods: 300)
            #expect(waitUntil { rig.recorder.status.take?.frames == 300 * 64 })
            #expect(rig.recorder.mark(label: "bridge"))
            #expect(waitUntil { rig.recorder.status.take?.markers == 1 })
            rig.run(periods: 300)
            rig.recorder.stop()
            rig.waitForIdle()
            #expect(waitForMirror(rig) { if case .copied = $0 { true } else { false } }, "\(rig.recorder.mirrorState)")
            for main in take.files {
                let copy = stick.path + "/" + (main.split(separator: "/").last.map(String.init) ?? "")
                #expect(FileManager.default.contents(atPath: main) == FileManager.default.contents(atPath: copy), "\(copy)")
                #expect(libsndfileCues(copy).count == 1)
            }
        }

        @Test func aRingTheMirrorCannotEmptyEndsTheCopy() {
            let format = TakeFormat(sampleRate: 48000, channels: 2, encoding: .pcm24)
            let copy = MirrorCopy(name: "t", plans: [.init(file: "t.wav", format: format,
                                                           bext: BroadcastInfo(description: "", originatorReference: "",
                                                                               date: "", time: "", timeReference: 0))],
                                  ringSeconds: 0.1)
            let block = [Float](repeating: 0.5, count: 2400 * 2)
            #expect(block.withUnsafeBufferPointer { copy.hand(0, $0.baseAddress!, frames: 2400) })
            #expect(block.withUnsafeBufferPointer { copy.hand(0, $0.baseAddress!, frames: 2400) })
            #expect(!block.withUnsafeBufferPointer { copy.hand(0, $0.baseAddress!, frames: 2400) }, "4800 frames is all it holds")
            let overflowed = copy.overflowed.load(ordering: .relaxed)
            #expect(overflowed)
        }
    }
}

extension RecorderTests.MirrorTests {
    /// A mirror on a real FAT32 filesystem (a loop-mounted image) splits its copy at the
    /// lowered limit; the parts join to exactly the take on the main medium, which is one file.
    @Test func aMirrorOnFATSplitsAndThePartsJoinToTheTake() throws {
        guard let stick = TemporaryFATMount() else {
            print("mirror on FAT32: not run (needs root, mkfs.fat, a loop device and vfat in the kernel)")
            return
        }
        defer { stick.remove() }
        let rig = try RecorderTests.Rig("fat-mirror", mirror: stick.path, splitThreshold: 300_000)
        let take = try rig.recorder.start().get()
        for _ in 0..<10 {
            rig.run(periods: 150) // 1500 periods of PCM_24 stereo: 576 kB of samples
            usleep(5000)
        }
        rig.recorder.stop()
        rig.waitForIdle()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, case .copying = rig.recorder.mirrorState { usleep(2000) }
        #expect(rig.recorder.mirrorState == .copied(take: take.name, directory: stick.path), "\(rig.recorder.mirrorState)")
        let main = try AudioFileReader(path: take.files[0]).readAll()
        #expect(main.count == 1500 * 64 * 2, "the main medium (not FAT) keeps one file")
        let name = String(take.files[0].split(separator: "/").last ?? "")
        let parts = (1...99).map { TakeParts.partPath(stick.path + "/" + name, number: $0) }
            .prefix { FileManager.default.fileExists(atPath: $0) }
        #expect(parts.count == 2, "576 kB of samples in parts of at most 300 kB: \(parts)")
        var joined: [Float] = []
        for part in parts {
            #expect(fileLength(part) > 0 && fileLength(part) <= 300_000, "\(part): \(fileLength(part)) bytes")
            joined += (try? AudioFileReader(path: part).readAll()) ?? []
        }
        #expect(joined == main, "the copy's parts join to exactly the take")
    }
}
