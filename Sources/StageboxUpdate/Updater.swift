import Logging
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The appliance's side of updates: installs a bundle into the other root slot through RAUC,
/// reboots into it, marks the running slot good once stagebox has run healthy for a while,
/// and boots the other slot on request. Every RAUC call runs on a thread of its own: the
/// console answers at once, the control thread never waits, the audio thread never knows.
public final class Updater: Sendable {
    public struct Settings: Sendable {
        public var rauc: Rauc
        /// VERSION= and COMPATIBLE= of the running system (tools/image/build writes it).
        public var releaseFile: String
        /// How long stagebox must have run healthy (audio running, watchdog fed) before the
        /// running slot is marked good.
        public var markGoodAfterSeconds: Double
        /// What restarts the box once an update is in (or a rollback chosen); nil: nothing.
        public var rebootCommand: [String]?
        /// Names the slot an update went into until that slot is marked good: while it does,
        /// S35rauc reboots a boot of that slot that is not healthy in time, which spends one of
        /// its tries (tools/image/rpi/boot.cmd).
        public var trialFile: String

        public init(rauc: Rauc = Rauc(), releaseFile: String = "/etc/stagebox-release", markGoodAfterSeconds: Double = 30,
                    rebootCommand: [String]? = ["/sbin/reboot"], trialFile: String = "/data/rauc/trial") {
            self.rauc = rauc
            self.releaseFile = releaseFile
            self.markGoodAfterSeconds = markGoodAfterSeconds
            self.rebootCommand = rebootCommand
            self.trialFile = trialFile
        }
    }

    /// Where an update stands, for `update`, `status` and the update trigger's LED.
    public enum Phase: Sendable, Equatable {
        case idle
        case waitingForTake(bundle: String)
        case installing(bundle: String, percent: Int, step: String)
        case installed(version: String)
        case failed(String)
    }

    private let settings: Settings
    private let logger: Logger
    private let takesRunning: @Sendable () -> Int
    private let onPhase: @Sendable (Phase) -> Void
    private let state = Mutex(State())
    private let job = Mutex<PosixThread?>(nil)

    private struct State {
        var phase = Phase.idle
        var busy = false
        /// The job holding `busy` is the mark-good one: short, and no reason to refuse a request.
        var markingGood = false
        var report: SlotReport?
        var healthySince: Double?
        var markedGood = false
        /// When the tick last looked for RAUC, and what it found: once a minute, not every tick.
        var raucLookedAt: Double?
        var raucFound = false
        /// `update` has answered with the install's end since it came (see `rebootOnceShown`).
        var installedShown = false
    }

    /// - Parameters:
    ///   - takesRunning: how many takes are being recorded (an install waits for them to end).
    ///   - onPhase: told of every change of phase, on the updater's thread.
    public init(settings: Settings, logger: Logger, takesRunning: @escaping @Sendable () -> Int,
                onPhase: @escaping @Sendable (Phase) -> Void = { _ in }) {
        self.settings = settings
        self.logger = logger
        self.takesRunning = takesRunning
        self.onPhase = onPhase
    }

    /// Whether this system has RAUC at all (the card does; a PC running --simulate does not).
    public var isAvailable: Bool { access(settings.rauc.path, X_OK) == 0 }

    public var phase: Phase { state.withLock { $0.phase } }

    /// The running system's version and board, from the release file.
    public var release: (version: String, compatible: String)? {
        guard let text = readSmallFile(settings.releaseFile) else { return nil }
        var version: String?
        var compatible: String?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VERSION=") { version = String(line.dropFirst(8)) }
            if line.hasPrefix("COMPATIBLE=") { compatible = String(line.dropFirst(11)) }
        }
        guard let version, let compatible else { return nil }
        return (version, compatible)
    }

    // MARK: Requests (any thread: the console's, the command line's through the bus)

    /// Starts installing `bundle`; answers at once with what happens next, or "refused: " and why.
    public func install(_ bundle: String, force: Bool) -> String {
        guard isAvailable else { return "refused: this system has no RAUC (\(settings.rauc.path)): updates need the card" }
        guard access(bundle, R_OK) == 0 else {
            return "refused: cannot read \(bundle): \(String(cString: strerror(errno)))"
        }
        guard begin() else { return "refused: an update is already under way (`update` shows it)" }
        // Under way from this answer on, for whoever asks `update` next.
        setPhase(.installing(bundle: bundle, percent: 0, step: "checking the bundle"))
        return start(named: "the update install") { [self] in runInstall(bundle, force: force) }
            ?? "installing \(bundle) into the other slot; `update` shows the progress"
    }

    /// Makes the other slot the next to boot and reboots into it.
    public func rollback() -> String {
        guard isAvailable else { return "refused: this system has no RAUC (\(settings.rauc.path)): updates need the card" }
        refreshReport()
        if let other = state.withLock({ $0.report })?.otherSlot, other.bootStatus != "good" {
            // Slot B of a card never updated is empty; a slot that failed its tries is broken.
            return "refused: slot \(other.bootname) holds no system known to boot (empty, or it failed); nothing changed"
        }
        guard begin() else { return "refused: an update is under way (`update` shows it)" }
        return start(named: "the update rollback") { [self] in
            do throws(UpdateError) {
                try settings.rauc.activateOther()
                logger.notice("update: the other slot boots next, at your request; rebooting")
                setPhase(.idle)
                reboot()
                finish(.idle)
            } catch {
                logger.error("update: rollback failed: \(error)")
                finish(.failed("rollback failed: \(error)"))
            }
        } ?? "booting the other slot: rebooting"
    }

    /// What `update` answers: the phase, the slots and their versions.
    public func describe() -> String {
        guard isAvailable else { return "this system has no RAUC (\(settings.rauc.path)): updates need the card" }
        refreshReport()
        let phase = state.withLock { s in
            if case .installed = s.phase { s.installedShown = true }
            return s.phase
        }
        var lines = [phaseLine(phase)] + (rollbackNote.map { [$0] } ?? [])
        if let report = state.withLock({ $0.report }) {
            for slot in report.slots {
                let version = slot.bootname == report.booted ? (release?.version ?? "?") : (slot.bundleVersion ?? (slot.bootStatus == "good" ? "as the card came" : "empty or unused"))
                let marks = [slot.bootname == report.booted ? "running" : nil, slot.bootname == report.primary ? "boots next" : nil,
                             slot.bootStatus == "good" ? "good" : "bad"].compactMap { $0 }
                lines.append("slot \(slot.bootname)  \(version)  (\(marks.joined(separator: ", ")))")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The line for `status`: the running slot, its version and whether it is marked good.
    public var statusLine: String? {
        guard isAvailable else { return nil }
        if state.withLock({ $0.report }) == nil { refreshReport() }
        guard let report = state.withLock({ $0.report }), let slot = report.bootedSlot else { return nil }
        let good = state.withLock { $0.markedGood } ? "marked good" : "not yet marked good"
        return "slot \(slot.bootname), \(release?.version ?? "?"), \(good)" + phaseSuffix(phase)
            + (rollbackNote.map { "; \($0)" } ?? "")
    }

    // MARK: The control thread's tick

    /// Whether RAUC is there, looked for at most once a minute (the tick runs several times a
    /// second, and RAUC does not come and go on a running box).
    private func raucFound(now: Double) -> Bool {
        let looked = state.withLock { s -> Bool? in
            guard let at = s.raucLookedAt, now >= at, now - at < 60 else { return nil }
            return s.raucFound
        }
        if let looked { return looked }
        let found = isAvailable
        state.withLock {
            $0.raucLookedAt = now
            $0.raucFound = found
        }
        return found
    }

    /// Called every tick with whether stagebox is healthy; once it has been for
    /// `markGoodAfterSeconds` in a row, marks the running slot good (once a boot).
    public func tick(healthy: Bool, now: Double) {
        guard !state.withLock({ $0.markedGood }), raucFound(now: now) else { return }
        let due = state.withLock { s -> Bool in
            guard !s.markedGood else { return false }
            guard healthy else {
                s.healthySince = nil
                return false
            }
            let since = s.healthySince ?? now
            s.healthySince = since
            guard now - since >= settings.markGoodAfterSeconds, !s.busy else { return false }
            s.busy = true
            s.markingGood = true
            return true
        }
        guard due else { return }
        _ = start(named: "the update mark-good") { [self] in
            do throws(UpdateError) {
                try settings.rauc.markGood()
                state.withLock { $0.markedGood = true }
                if let booted = state.withLock({ $0.report?.booted }) ?? (try? settings.rauc.status())?.booted,
                   readSmallFile(settings.trialFile)?.trimmingBlanks == booted {
                    unlink(settings.trialFile)
                    logger.notice("update: slot \(booted) passed its trial")
                }
                logger.notice("update: this slot ran healthy for \(Int(settings.markGoodAfterSeconds)) s: marked good")
            } catch {
                logger.error("update: \(error)")
            }
            refreshReport()
            state.withLock {
                $0.busy = false
                $0.markingGood = false
            }
        }
    }

    /// Waits for the running job (call once the appliance stops).
    public func stop() {
        job.withLock { $0.take() }?.join()
    }

    // MARK: The jobs

    private func runInstall(_ bundle: String, force: Bool) {
        do throws(UpdateError) {
            let info = try settings.rauc.info(bundle)
            if let running = release {
                guard info.compatible == running.compatible else {
                    throw UpdateError("\(bundle) is for \(info.compatible), this system is \(running.compatible)")
                }
                if !force && SystemVersion(info.version) < SystemVersion(running.version) {
                    throw UpdateError("\(bundle) holds \(info.version), older than the running \(running.version) (update --force installs it anyway)")
                }
            }
            if takesRunning() > 0 {
                logger.notice("update: \(bundle) waits for the take to end")
                setPhase(.waitingForTake(bundle: bundle))
                while takesRunning() > 0 { usleep(200_000) }
            }
            refreshReport()
            let target = try settings.rauc.status().otherSlot?.bootname
            unlink(settings.trialFile + ".failed")
            logger.notice("update: installing \(bundle) (\(info.version))")
            var lastLogged = -10
            setPhase(.installing(bundle: bundle, percent: 0, step: "starting"))
            try settings.rauc.install(bundle) { percent, step in
                setPhase(.installing(bundle: bundle, percent: percent, step: step))
                if percent >= lastLogged + 10 || percent == 100 {
                    lastLogged = percent
                    logger.info("update: \(percent)% \(step)")
                }
            }
            if let target {
                do throws(SystemCallError) {
                    try WholeFile.write(target + "\n", to: settings.trialFile)
                } catch {
                    logger.warning("update: \(error); a failing boot of slot \(target) is not rebooted early")
                }
            }
            logger.notice("update: \(info.version) installed in the other slot; rebooting into it")
            refreshReport()
            setPhase(.installed(version: info.version))
            rebootOnceShown()
            finish(.installed(version: info.version))
        } catch {
            logger.error("update: \(error)")
            finish(.failed(error.description))
        }
    }

    /// Reboots once `update` has answered with the install's end, or after 5 s: `stagebox
    /// update FILE` follows the install by asking `update`, and takes a connection that closes
    /// before it saw the end for a failure. An answer can wait behind a slow console line.
    private func rebootOnceShown() {
        guard settings.rebootCommand?.first != nil else { return }
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while !state.withLock({ $0.installedShown }) && monotonicNanoseconds() < deadline { usleep(100_000) }
        usleep(300_000) // the answer on its way to the client
        reboot()
    }

    private func reboot() {
        guard let command = settings.rebootCommand, let path = command.first else { return }
        do {
            _ = try ChildProcess.run(path, Array(command.dropFirst()))
        } catch {
            logger.error("update: cannot reboot (\(error)): power the box off and on to run the new slot")
        }
    }

    // MARK: Helpers

    private func begin() -> Bool {
        // An install or rollback asked while the running slot is being marked good (one RAUC
        // call, 30 s into a healthy boot) waits for that to end instead of being refused as if
        // an update were under way. Only `tick` starts that job, and only once it has ended does
        // it clear both flags, so the job in `job` is the mark-good one here.
        if state.withLock({ $0.markingGood }) {
            job.withLock { $0.take() }?.join()
        }
        return state.withLock { s in
            guard !s.busy else { return false }
            s.busy = true
            return true
        }
    }

    /// Runs `body` on a thread of its own; nil when it started, else the refusal.
    private func start(named name: String, _ body: @escaping @Sendable () -> Void) -> String? {
        job.withLock { $0.take() }?.join()
        switch PosixThread.start(named: name, stackSize: PosixThread.serviceStackSize, body) {
        case .success(let thread):
            job.withLock { $0 = thread }
            return nil
        case .failure(let error):
            state.withLock { $0.busy = false }
            return "refused: \(error)"
        }
    }

    private func setPhase(_ phase: Phase) {
        let changed = state.withLock { s -> Bool in
            defer { s.phase = phase; s.installedShown = false }
            return s.phase != phase
        }
        if changed { onPhase(phase) }
    }

    private func finish(_ phase: Phase) {
        setPhase(phase)
        state.withLock { $0.busy = false }
    }

    private func refreshReport() {
        guard let report = try? settings.rauc.status() else { return }
        let first = state.withLock { s in
            defer { s.report = report }
            return s.report == nil
        }
        // Once a run, before any install of its own: a slot still on trial from an earlier boot
        // that is not the one running failed its trial, and U-Boot went back.
        if first, let slot = readSmallFile(settings.trialFile)?.trimmingBlanks, slot != report.booted,
           rename(settings.trialFile, settings.trialFile + ".failed") == 0 {
            let version = report.slots.first { $0.bootname == slot }?.bundleVersion ?? "?"
            logger.error("update: slot \(slot) (\(version)) did not come up healthy in 3 boots: slot \(report.booted) runs again")
        }
    }

    /// What became of the last update, when it was rolled back by the boot counter.
    private var rollbackNote: String? {
        guard let report = state.withLock({ $0.report }),
              let slot = readSmallFile(settings.trialFile + ".failed")?.trimmingBlanks, slot != report.booted else { return nil }
        let version = report.slots.first { $0.bootname == slot }?.bundleVersion ?? "?"
        return "the update to \(version) in slot \(slot) did not come up healthy: rolled back to slot \(report.booted)"
    }

    private func phaseLine(_ phase: Phase) -> String {
        switch phase {
        case .idle: return "no update under way"
        case .waitingForTake(let bundle): return "\(bundle): waiting for the take to end"
        case let .installing(bundle, percent, step): return "\(bundle): \(percent)% \(step)"
        case .installed(let version): return "\(version) installed in the other slot; it runs after the reboot"
        case .failed(let why): return "the last update failed: \(why)"
        }
    }

    private func phaseSuffix(_ phase: Phase) -> String {
        switch phase {
        case .idle: return ""
        case .waitingForTake: return "; update waiting for the take"
        case let .installing(_, percent, _): return "; installing an update, \(percent)%"
        case .installed(let version): return "; \(version) installed, reboot pending"
        case .failed: return "; the last update failed (see `update`)"
        }
    }
}

extension String {
    fileprivate var trimmingBlanks: String {
        String(drop { $0 == " " || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\n" }.reversed())
    }
}

/// A small text file's contents (nil if it cannot be read).
private func readSmallFile(_ path: String) -> String? {
    try? WholeFile.read(path, limit: 4096)
}
