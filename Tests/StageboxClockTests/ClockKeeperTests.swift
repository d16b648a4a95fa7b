import Foundation
import StageboxClock
import StageboxSystem
import SystemPackage
import Synchronization
import Testing

/// The clock after a power cut on a board without a battery: never behind what was saved, nor
/// behind the newest take. The system clock itself is not set here: `setClock` is the test's.
@Suite struct ClockKeeperTests {
    private func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-clock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aClockBehindTheSavedTimeIsSetForwardPastIt() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let later = ClockKeeper.nowSeconds() + 86_400 * 365
        try SavedTime.write(later, to: dir + "/clock")
        let set = Mutex<Int64?>(nil)
        let keeper = ClockKeeper(.init(file: dir + "/clock", folders: []), setClock: { s in set.withLock { $0 = s }; return nil }) { _ in }
        #expect(set.withLock { $0 } == later + 1)
        guard case .setForward(_, let to) = keeper.start else { Issue.record("\(keeper.start)"); return }
        #expect(to == later + 1)
        #expect(keeper.startLine.contains("was behind the last known time") && keeper.startLine.contains(SavedTime.utc(later + 1)))
    }

    /// A take written up to a power cut is newer than the last save: its time counts too.
    @Test func theNewestTakeCountsLikeTheSavedTime() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/takes", withIntermediateDirectories: true)
        let take = dir + "/takes/2026-11-26_1400_0007_codec.in.wav"
        #expect(FileManager.default.createFile(atPath: take, contents: Data([1, 2, 3])))
        let future = Date().addingTimeInterval(3600 * 5)
        try FileManager.default.setAttributes([.modificationDate: future], ofItemAtPath: take)
        try SavedTime.write(ClockKeeper.nowSeconds() + 60, to: dir + "/clock")
        let set = Mutex<Int64?>(nil)
        _ = ClockKeeper(.init(file: dir + "/clock", folders: [dir + "/takes"]), setClock: { s in set.withLock { $0 = s }; return nil }) { _ in }
        #expect(set.withLock { $0 } == Int64(future.timeIntervalSince1970) + 1)
    }

    @Test func aClockAheadIsLeftAloneAndACutShortFileIsNoTime() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "".write(toFile: dir + "/clock", atomically: true, encoding: .utf8)
        #expect(SavedTime.read(dir + "/clock") == nil)
        try "12x".write(toFile: dir + "/clock", atomically: true, encoding: .utf8)
        #expect(SavedTime.read(dir + "/clock") == nil)
        try SavedTime.write(1_000_000, to: dir + "/clock")
        #expect(SavedTime.read(dir + "/clock") == 1_000_000)
        #expect(try WholeFile.read(dir + "/clock") == "1000000 1970-01-12T13:46:40Z\n")
        let keeper = ClockKeeper(.init(file: dir + "/clock", folders: []), setClock: { _ in Issue.record("set"); return nil }) { _ in }
        #expect(keeper.start == .ahead(savedSeconds: 1_000_000))
    }

    @Test func aClockThatCannotBeSetSaysSo() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SavedTime.write(ClockKeeper.nowSeconds() + 1000, to: dir + "/clock")
        let keeper = ClockKeeper(.init(file: dir + "/clock", folders: []), setClock: { _ in .notPermitted }) { _ in }
        guard case .behindButNotSet = keeper.start else { Issue.record("\(keeper.start)"); return }
        #expect(keeper.startLine.contains("cannot be set (") && keeper.startLine.contains("take names may sort before older ones"))
    }

    /// The thread saves at once, on a take's start (`saveSoon`), and at a stop.
    @Test func theTimeIsSavedWhileRunningAndAtTheStop() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var settings = ClockKeeper.Settings(file: dir + "/clock", folders: [])
        settings.saveIntervalNanos = 3_600_000_000_000
        let keeper = ClockKeeper(settings, setClock: { _ in nil }) { _ in }
        try keeper.startSaving()
        #expect(waitForFile { SavedTime.read(dir + "/clock") != nil })
        try FileManager.default.removeItem(atPath: dir + "/clock")
        keeper.saveSoon()
        #expect(waitForFile { SavedTime.read(dir + "/clock") != nil }, "saved on a take's start")
        try FileManager.default.removeItem(atPath: dir + "/clock")
        keeper.stop()
        let saved = try #require(SavedTime.read(dir + "/clock"), "saved at the stop")
        #expect(abs(saved - ClockKeeper.nowSeconds()) <= 2)
    }

    @Test func aFileThatCannotBeWrittenIsReportedByName() {
        let problems = Mutex<[String]>([])
        let keeper = ClockKeeper(.init(file: "/nonexistent-stagebox/clock", folders: []), setClock: { _ in nil }) { line in
            problems.withLock { $0.append(line) }
        }
        keeper.save()
        #expect(problems.withLock { $0 }.first?.hasPrefix("clock: the time cannot be saved: ") == true)
        #expect(problems.withLock { $0 }.first?.contains("/nonexistent-stagebox/clock") == true)
    }

    private func waitForFile(_ condition: () -> Bool) -> Bool {
        for _ in 0..<1500 where !condition() { usleep(20_000) }
        return condition()
    }
}
