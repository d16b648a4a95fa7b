import Foundation
import Logging
import StageboxTestSupport
import StageboxUpdate
import Synchronization
import Testing

/// The updater's decisions above RAUC: what it refuses and why, that an install waits for a
/// take, the phases an LED shows, marking good only after a healthy while, the rollback.
@Suite struct UpdaterTests {
    /// What a test changes and watches from its side while the updater runs.
    final class Watch: Sendable {
        let takes = Atomic(0)
        let phases = Mutex<[Updater.Phase]>([])
    }

    private func updater(_ rauc: RaucStandIn, markGoodAfter: Double = 30, watch: Watch = Watch()) -> Updater {
        let settings = Updater.Settings(rauc: Rauc(path: rauc.path), releaseFile: rauc.scratch.path("release"),
                                        markGoodAfterSeconds: markGoodAfter,
                                        rebootCommand: ["/bin/sh", "-c", "echo reboot >>'\(rauc.scratch.path("calls.log"))'"],
                                        trialFile: rauc.scratch.path("trial"))
        return Updater(settings: settings, logger: Logger(label: "test"), takesRunning: { watch.takes.load(ordering: .relaxed) }) {
            phase in watch.phases.withLock { $0.append(phase) }
        }
    }

    private func bundle(_ rauc: RaucStandIn) throws -> String { try rauc.scratch.write("update.raucb", "a bundle") }

    /// Until the install ends one way or the other (each step runs the stand-in, a shell
    /// script: seconds on a loaded machine).
    private func settled(_ u: Updater) -> Bool {
        waitUntil {
            switch u.phase {
            case .installed, .failed: true
            default: false
            }
        }
    }

    private func waitUntil(_ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(60)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    @Test func anInstallShowsItsProgressThenReboots() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let watch = Watch()
        let u = updater(rauc, watch: watch)
        let file = try bundle(rauc)
        #expect(u.install(file, force: false) == "installing \(file) into the other slot; `update` shows the progress")
        #expect(settled(u))
        u.stop()
        #expect(u.phase == Updater.Phase.installed(version: "0.1.0-2"))
        #expect(watch.phases.withLock { $0 }.contains(.installing(bundle: file, percent: 60, step: "Copying image to rootfs.1")))
        #expect(rauc.calls.suffix(2) == ["status --detailed --output-format=shell", "reboot"])
        #expect(u.describe().contains("slot B  0.0.9 it's old  (good)"), "\(u.describe())")
        #expect((try? String(contentsOfFile: rauc.scratch.path("trial"), encoding: .utf8)) == "B\n", "B is on trial")
    }

    @Test func olderBundlesAreRefusedUnlessForced() throws {
        let rauc = try RaucStandIn(version: "0.2.0", bundleVersion: "0.1.5")
        defer { rauc.scratch.remove() }
        let u = updater(rauc)
        let file = try bundle(rauc)
        _ = u.install(file, force: false)
        #expect(settled(u))
        #expect(u.phase == Updater.Phase.failed("\(file) holds 0.1.5, older than the running 0.2.0 (update --force installs it anyway)"))
        #expect(!rauc.calls.contains { $0.hasPrefix("install") }, "nothing was written")
        _ = u.install(file, force: true)
        u.stop()
        #expect(u.phase == Updater.Phase.installed(version: "0.1.5"))
    }

    @Test func aBundleForAnotherBoardIsRefusedByName() throws {
        let rauc = try RaucStandIn(compatible: "stagebox-x86_64")
        defer { rauc.scratch.remove() }
        let u = updater(rauc)
        let file = try bundle(rauc)
        _ = u.install(file, force: true)
        #expect(settled(u))
        #expect(u.phase == Updater.Phase.failed("\(file) is for stagebox-x86_64, this system is stagebox-rpi"))
    }

    @Test func refusalsThatNeedNoRauc() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let u = updater(rauc)
        #expect(u.install("/nonexistent.raucb", force: false) == "refused: cannot read /nonexistent.raucb: No such file or directory")
        let missing = Updater(settings: .init(rauc: Rauc(path: "/nonexistent/rauc")), logger: Logger(label: "test"), takesRunning: { 0 })
        #expect(missing.install("/x", force: false).hasPrefix("refused: this system has no RAUC (/nonexistent/rauc)"))
        #expect(missing.statusLine == nil)
    }

    @Test func anInstallWaitsForTheTakeToEnd() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let watch = Watch()
        watch.takes.store(1, ordering: .relaxed)
        let u = updater(rauc, watch: watch)
        let file = try bundle(rauc)
        _ = u.install(file, force: false)
        #expect(waitUntil { u.phase == Updater.Phase.waitingForTake(bundle: file) }, "\(u.phase)")
        usleep(300_000)
        #expect(u.phase == Updater.Phase.waitingForTake(bundle: file), "it goes on waiting")
        #expect(u.install(file, force: false).hasPrefix("refused: an update is already under way"))
        #expect(!rauc.calls.contains { $0.hasPrefix("install") })
        watch.takes.store(0, ordering: .relaxed)
        #expect(settled(u))
        u.stop()
        #expect(u.phase == Updater.Phase.installed(version: "0.1.0-2"))
    }

    @Test func theSlotIsMarkedGoodOnlyAfterAHealthyWhile() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let u = updater(rauc, markGoodAfter: 30)
        u.tick(healthy: true, now: 100)
        u.tick(healthy: true, now: 120)
        u.tick(healthy: false, now: 125) // a stall starts the count again
        u.tick(healthy: true, now: 130)
        u.tick(healthy: true, now: 159)
        u.stop()
        #expect(!rauc.calls.contains("status mark-good"))
        u.tick(healthy: true, now: 160)
        u.stop()
        #expect(rauc.calls.filter { $0 == "status mark-good" }.count == 1)
        u.tick(healthy: true, now: 400)
        u.stop()
        #expect(rauc.calls.filter { $0 == "status mark-good" }.count == 1, "once a boot")
        #expect(u.statusLine == "slot A, 0.1.0-1, marked good")
    }

    /// The tick looks for RAUC once a minute, not every tick: a box whose RAUC is missing at
    /// first (moved away here) finds it at the next look, and marks its slot good then.
    @Test func theTickLooksForRaucOnceAMinute() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let hidden = rauc.scratch.path("rauc.hidden")
        #expect(rename(rauc.path, hidden) == 0)
        let u = updater(rauc, markGoodAfter: 0)
        u.tick(healthy: true, now: 100) // no RAUC: nothing to mark
        #expect(rename(hidden, rauc.path) == 0)
        u.tick(healthy: true, now: 130) // looked 30 s ago: not looked for again yet
        u.stop()
        #expect(rauc.calls.isEmpty)
        u.tick(healthy: true, now: 160)
        u.stop()
        #expect(rauc.calls.filter { $0 == "status mark-good" }.count == 1)
    }

    /// A user's install that lands while the slot is being marked good (30 s into a healthy
    /// boot) waits for it: it was refused as "an update is already under way" (found by the
    /// x86-update VM scenario on a slow run).
    @Test func anInstallDuringMarkGoodWaitsForIt() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let u = updater(rauc, markGoodAfter: 0)
        let file = try bundle(rauc)
        u.tick(healthy: true, now: 1) // starts marking good: the stand-in runs for a while
        #expect(u.install(file, force: false) == "installing \(file) into the other slot; `update` shows the progress")
        #expect(settled(u))
        u.stop()
        #expect(u.phase == Updater.Phase.installed(version: "0.1.0-2"))
        let calls = rauc.calls
        let marked = try #require(calls.firstIndex(of: "status mark-good"))
        let installed = try #require(calls.firstIndex { $0.hasPrefix("install") })
        #expect(marked < installed, "\(calls)")
    }

    @Test func markingTheSlotOnTrialGoodEndsItsTrial() throws {
        let rauc = try RaucStandIn(booted: "B")
        defer { rauc.scratch.remove() }
        _ = try rauc.scratch.write("trial", "B\n")
        let u = updater(rauc, markGoodAfter: 0)
        u.tick(healthy: true, now: 1)
        u.stop()
        #expect(!FileManager.default.fileExists(atPath: rauc.scratch.path("trial")))
        #expect(u.statusLine == "slot B, 0.1.0-1, marked good")
    }

    @Test func aSlotThatFailedItsTrialIsReportedAsRolledBack() throws {
        let rauc = try RaucStandIn(booted: "A")
        defer { rauc.scratch.remove() }
        _ = try rauc.scratch.write("trial", "B\n")
        let u = updater(rauc)
        let line = try #require(u.statusLine)
        #expect(line.hasSuffix("; the update to 0.0.9 it's old in slot B did not come up healthy: rolled back to slot A"), "\(line)")
        #expect(FileManager.default.fileExists(atPath: rauc.scratch.path("trial.failed")))
        #expect(!FileManager.default.fileExists(atPath: rauc.scratch.path("trial")))
        #expect(u.describe().split(separator: "\n").dropFirst().first?.hasPrefix("the update to 0.0.9") == true)
    }

    @Test func aRollbackMakesTheOtherSlotNextAndReboots() throws {
        let rauc = try RaucStandIn()
        defer { rauc.scratch.remove() }
        let u = updater(rauc)
        #expect(u.rollback() == "booting the other slot: rebooting")
        u.stop()
        #expect(rauc.calls.suffix(2) == ["status mark-active other", "reboot"])
    }

    @Test func aRollbackToASlotThatCannotBootIsRefused() throws {
        let rauc = try RaucStandIn(otherSlotStatus: "bad")
        defer { rauc.scratch.remove() }
        let u = updater(rauc)
        #expect(u.rollback() == "refused: slot B holds no system known to boot (empty, or it failed); nothing changed")
        u.stop()
        #expect(!rauc.calls.contains { $0.hasPrefix("status mark-active") })
    }
}
