import Logging
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the mirror stands, for `status`, `storage` and the record trigger; each state names
/// the take it is about.
public enum MirrorState: Sendable, Equatable {
    /// No mirror configured, or no take yet.
    case idle
    /// Copying take `take` into `directory` (until the mirror has found it: the setting).
    case copying(take: String, directory: String)
    /// The take's copy is whole.
    case copied(take: String, directory: String)
    /// The take's copy ended early, or could not start: the take on the main medium goes on.
    case failed(take: String, reason: String)

    public var take: String? {
        switch self {
        case .idle: nil
        case let .copying(take, _), let .copied(take, _), let .failed(take, _): take
        }
    }
}

/// The mirror's thread: writes every take a second time, on another medium (a USB stick),
/// from what the takes' writer hands it. Its own thread and rings: a slow, hung or pulled
/// medium never holds up the takes' writer, and never reaches the audio thread.
final class MirrorWriter: @unchecked Sendable {
    // @unchecked: `copies`, `scratch` and `nextSync` are used only on the mirror's thread, after
    // `pending` handed the copies over under its lock; `loop` is set by `start`, before the
    // takes' writer (which wakes it) starts, and not changed after.
    private typealias Entry = (copy: MirrorCopy, files: [TakeParts]?, directory: String)
    private let settings: RecorderSettings
    private let logger: Logger
    private let pending = Mutex<[MirrorCopy]>([])
    private let published = Mutex<MirrorState>(.idle)
    /// Mount points whose medium went (pulled) during this take: its copies there fail at the
    /// next round, or as soon as the mirror's thread finds its directory there.
    private let gone = Mutex<[String]>([])
    private var copies: [Entry] = []
    private var nextSync: Int64 = 0
    private var scratch = [Float](repeating: 0, count: 4096 * 8)
    private var loop: ServiceLoop?
    /// How long a stop waits for the last copy to drain onto a slow medium.
    private static let finishNanos: Int64 = 5_000_000_000

    init(settings: RecorderSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    var state: MirrorState { published.withLock { $0 } }

    func start() throws(SystemCallError) {
        let started = try ServiceLoop(named: "the mirror")
        loop = started
        try started.start({ [self] _ in .init(deadline: round()) }, finish: { [self] in finish() })
    }

    func stop() { loop?.stop() }

    /// The takes' writer's side: a new take's copy. Published before the mirror's thread can
    /// see it, so that its answer (a failure at once) comes after.
    func begin(_ copy: MirrorCopy) {
        gone.withLock { $0.removeAll() } // a stick plugged again since is a medium again
        published.withLock { $0 = .copying(take: copy.name, directory: settings.mirror) }
        pending.withLock { $0.append(copy) }
        loop?.wake()
    }

    /// The takes' writer's side: the copy got its last frame.
    func end(_ copy: MirrorCopy) {
        copy.ended.store(true, ordering: .releasing)
        loop?.wake()
    }

    /// The media thread's side: the medium mounted at `mountPoint` went. The take's copy on it
    /// shows as failed at once (for `status` and the record LED), before the mirror's thread,
    /// which may be in a write to the dead medium, closes it.
    func mediumGone(_ mountPoint: String, reason: String) {
        published.withLock { state in
            if case let .copying(take, directory) = state, directory.isInside(mountPoint) {
                state = .failed(take: take, reason: reason)
                logger.error("recorder: mirror: take \(take): \(reason); its copy ends here, the take on \(settings.directory) goes on")
            }
        }
        gone.withLock { $0.append(mountPoint) }
        loop?.wake()
    }

    /// Sets the state about `copy`'s take, unless a newer take's state is showing; a failure
    /// shown (a pulled stick) stays, with its reason, whatever the mirror's thread finds after.
    private func publish(_ state: MirrorState, about copy: MirrorCopy) {
        published.withLock { shown in
            guard shown.take == copy.name else { return }
            if case .failed = shown { return }
            shown = state
        }
    }

    /// Whether `directory` is on a medium that went during this take.
    private func isGone(_ directory: String) -> Bool { gone.withLock { $0.contains { directory.isInside($0) } } }

    // MARK: the mirror's thread

    private func takePending() {
        copies += pending.withLock { taken in
            defer { taken.removeAll() }
            return taken
        }.map { ($0, nil, "") }
    }

    private func stepAll() {
        var i = 0
        while i < copies.count {
            if step(&copies[i]) { copies.remove(at: i) } else { i += 1 }
        }
    }

    private func round() -> Int64 {
        takePending()
        copies.removeAll { entry in
            guard entry.files != nil, isGone(entry.directory) else { return false }
            fail(entry, "its medium went", quietly: true)
            return true
        }
        stepAll()
        let now = monotonicNanoseconds()
        if now >= nextSync {
            nextSync = now + Int64(settings.syncIntervalMs) * 1_000_000
            copies.removeAll { !sync($0) }
        }
        return monotonicNanoseconds() + (copies.isEmpty ? 1_000_000_000 : 10_000_000)
    }

    /// The last round: the takes' writer has ended its take, so every copy drains and closes,
    /// for as long as `finishNanos` allows; what a slow medium has not taken by then is cut.
    private func finish() {
        takePending()
        for entry in copies { entry.copy.ended.store(true, ordering: .releasing) }
        let deadline = monotonicNanoseconds() + Self.finishNanos
        while !copies.isEmpty && monotonicNanoseconds() < deadline { stepAll() }
        for entry in copies { fail(entry, "stagebox stopped before the copy was whole") }
        copies.removeAll()
    }

    /// Moves a copy on; true when it is done with (closed or failed).
    private func step(_ entry: inout Entry) -> Bool {
        let copy = entry.copy
        if entry.files == nil {
            switch MirrorTarget.resolve(settings.mirror, mediaRoot: settings.mediaRoot, mainDirectory: settings.directory) {
            case nil: return true
            case .failure(let refusal)?:
                fail(entry, refusal.reason)
                return true
            case .success(let directory)? where isGone(directory):
                fail(entry, "its medium went", quietly: true)
                return true
            case .success(let directory)?:
                entry.directory = directory
                do throws(SystemCallError) { entry.files = try make(copy, in: directory) } catch {
                    fail(entry, "\(error)")
                    return true
                }
                publish(.copying(take: copy.name, directory: directory), about: copy)
            }
        }
        guard let files = entry.files else { return true }
        let ended = copy.ended.load(ordering: .acquiring) // before draining: every frame handed is in the rings
        for cue in copy.cues.withLock({ taken in defer { taken.removeAll() }; return taken }) where cue.file < files.count {
            files[cue.file].addCue(frame: cue.frame, label: cue.label)
        }
        for (index, file) in files.enumerated() {
            let ring = copy.rings[index]
            if scratch.count < 4096 * ring.channels { scratch = [Float](repeating: 0, count: 4096 * ring.channels) }
            var failure: SystemCallError?
            scratch.withUnsafeMutableBufferPointer { buffer in
                while failure == nil {
                    let n = ring.read(into: buffer.baseAddress!, maxFrames: 4096)
                    if n == 0 { break }
                    do throws(SystemCallError) { try file.append(buffer.baseAddress!, frames: n) } catch { failure = error }
                }
            }
            if let failure {
                fail(entry, failure.errno == .noSpace ? "\(file.path): the medium is full" : "\(failure)")
                return true
            }
        }
        if copy.overflowed.load(ordering: .acquiring) {
            fail(entry, "the medium fell behind the take (its ring of \(formatSeconds(settings.mirrorRingSeconds)) s filled)")
            return true
        }
        guard ended else { return false }
        close(entry)
        return true
    }

    private func make(_ copy: MirrorCopy, in directory: String) throws(SystemCallError) -> [TakeParts] {
        var files: [TakeParts] = []
        let limit = settings.fileSizeLimit(of: directory) // a FAT32 stick: parts before 4 GiB
        for plan in copy.plans {
            do {
                files.append(try TakeParts(path: directory + "/" + plan.file, format: plan.format, bext: plan.bext,
                                           rf64Threshold: settings.rf64Threshold, limit: limit))
            } catch {
                for f in files { try? f.close(); unlink(f.path) } // none of the take, rather than some of its files
                throw error
            }
        }
        logger.info("recorder: mirror: take \(copy.name) copying to \(directory)")
        return files
    }

    /// Syncs a copy's files; false when that failed (the copy is closed).
    private func sync(_ entry: Entry) -> Bool {
        guard let files = entry.files else { return true }
        for file in files {
            do throws(SystemCallError) { try file.sync() } catch {
                fail(entry, "\(error)")
                return false
            }
        }
        return true
    }

    private func fail(_ entry: Entry, _ reason: String, quietly: Bool = false) {
        entry.copy.closed.store(true, ordering: .releasing)
        for f in entry.files ?? [] { try? f.close() }
        if quietly { return publish(.failed(take: entry.copy.name, reason: reason), about: entry.copy) }
        logger.error("recorder: mirror: take \(entry.copy.name): \(reason); its copy ends here, the take on \(settings.directory) goes on")
        publish(.failed(take: entry.copy.name, reason: reason), about: entry.copy)
    }

    private func close(_ entry: Entry) {
        entry.copy.closed.store(true, ordering: .releasing)
        var failure: String?
        for f in entry.files ?? [] {
            do throws(SystemCallError) { try f.close() } catch { failure = failure ?? "\(error)" }
        }
        if let failure {
            logger.error("recorder: mirror: take \(entry.copy.name): closing: \(failure)")
            publish(.failed(take: entry.copy.name, reason: failure), about: entry.copy)
        } else {
            logger.info("recorder: mirror: take \(entry.copy.name) copied whole to \(entry.directory)")
            publish(.copied(take: entry.copy.name, directory: entry.directory), about: entry.copy)
        }
    }
}
