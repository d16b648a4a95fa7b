import Logging
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the mirror stands, for `status`, `storage` and the record trigger.
public enum MirrorState: Sendable, Equatable {
    /// No mirror configured, or no take yet.
    case idle
    /// Copying take `take` into `directory`.
    case copying(take: String, directory: String)
    /// The last take's copy is whole.
    case copied(take: String, directory: String)
    /// The last copy ended early, or could not start: the takes on the main medium go on.
    case failed(String)
}

/// The mirror's thread: writes every take a second time, on another medium (a USB stick),
/// from what the takes' writer hands it. Its own thread and rings: a slow or pulled medium
/// never holds up the takes' writer, and never reaches the audio thread.
final class MirrorWriter: @unchecked Sendable {
    // @unchecked: `copies` and `files` are used only on the mirror's thread (in `round`), after
    // `pending` handed the copies over under its lock; `loop` is set by `start`, before the
    // takes' writer (which wakes it) starts, and not changed after.
    private let settings: RecorderSettings
    private let logger: Logger
    private let pending = Mutex<[MirrorCopy]>([])
    private let published = Mutex<MirrorState>(.idle)
    private var copies: [(copy: MirrorCopy, files: [TakeFile]?)] = []
    private var nextSync: Int64 = 0
    private var scratch = [Float](repeating: 0, count: 4096 * 8)
    private var loop: ServiceLoop?

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

    /// The takes' writer's side: a new take's copy, to be made in `directory`.
    func begin(_ copy: MirrorCopy) {
        pending.withLock { $0.append(copy) }
        published.withLock { $0 = .copying(take: copy.name, directory: directory(of: copy)) }
        loop?.wake()
    }

    /// The takes' writer's side: the copy got its last frame.
    func end(_ copy: MirrorCopy) {
        copy.ended.store(true, ordering: .releasing)
        loop?.wake()
    }

    /// Says the mirror cannot copy this take (no medium); the main take goes on.
    func refuse(_ reason: String) {
        logger.error("recorder: mirror: \(reason); this take is on \(settings.directory) only")
        published.withLock { $0 = .failed(reason) }
    }

    private func directory(of copy: MirrorCopy) -> String {
        let path = copy.plans.first?.path ?? ""
        return path.lastIndex(of: "/").map { String(path[..<$0]) } ?? path
    }

    // MARK: the mirror's thread

    private func takePending() {
        copies += pending.withLock { taken in
            defer { taken.removeAll() }
            return taken
        }.map { ($0, nil) }
    }

    private func round() -> Int64 {
        takePending()
        var i = 0
        while i < copies.count {
            if step(&copies[i]) { copies.remove(at: i) } else { i += 1 }
        }
        let now = monotonicNanoseconds()
        if now >= nextSync {
            nextSync = now + Int64(settings.syncIntervalMs) * 1_000_000
            copies.removeAll { !sync($0) }
        }
        return monotonicNanoseconds() + (copies.isEmpty ? 1_000_000_000 : 10_000_000)
    }

    private func finish() {
        // The takes' writer has ended its take before the mirror stops: drain and close.
        takePending()
        for c in copies.indices { copies[c].copy.ended.store(true, ordering: .releasing) }
        var i = 0
        while i < copies.count {
            if step(&copies[i]) { copies.remove(at: i) } else { i += 1 }
        }
        for c in copies { close(c) }
        copies.removeAll()
    }

    /// Moves a copy on; true when it is done with (closed or failed).
    private func step(_ entry: inout (copy: MirrorCopy, files: [TakeFile]?)) -> Bool {
        let copy = entry.copy
        if entry.files == nil {
            do throws(SystemCallError) { entry.files = try make(copy) } catch {
                fail(copy, files: [], "\(error)")
                return true
            }
        }
        guard let files = entry.files else { return true }
        let ended = copy.ended.load(ordering: .acquiring) // before draining: every frame handed is in the rings
        let cues = copy.cues.withLock { taken in
            defer { taken.removeAll() }
            return taken
        }
        for cue in cues {
            for (index, file) in files.enumerated() where cue.file == nil || cue.file == index {
                file.addCue(frame: cue.frame, label: cue.label)
            }
        }
        for (index, file) in files.enumerated() {
            let ring = copy.rings[index]
            let channels = ring.channels
            if scratch.count < 4096 * channels { scratch = [Float](repeating: 0, count: 4096 * channels) }
            var failure: SystemCallError?
            scratch.withUnsafeMutableBufferPointer { buffer in
                while failure == nil {
                    let n = ring.read(into: buffer.baseAddress!, maxFrames: 4096)
                    if n == 0 { break }
                    do throws(SystemCallError) { try file.append(buffer.baseAddress!, frames: n) } catch { failure = error }
                }
            }
            if let failure {
                fail(copy, files: files, failure.errno == .noSpace ? "\(file.path): the medium is full" : "\(failure)")
                return true
            }
        }
        if copy.overflowed.load(ordering: .acquiring) {
            fail(copy, files: files, "the medium fell behind the take (its ring of \(Int(settings.ringSeconds * 2)) s filled)")
            return true
        }
        guard ended else { return false }
        close((copy, files))
        return true
    }

    private func make(_ copy: MirrorCopy) throws(SystemCallError) -> [TakeFile] {
        var files: [TakeFile] = []
        for plan in copy.plans {
            do {
                files.append(try TakeFile(path: plan.path, format: plan.format, bext: plan.bext,
                                          rf64Threshold: settings.rf64Threshold))
            } catch {
                for f in files { try? f.close() }
                throw error
            }
        }
        logger.info("recorder: mirror: take \(copy.name) copied to \(files.map(\.path).joined(separator: ", "))")
        return files
    }

    /// Syncs a copy's files; false when that failed (the copy is closed).
    private func sync(_ entry: (copy: MirrorCopy, files: [TakeFile]?)) -> Bool {
        guard let files = entry.files else { return true }
        for file in files {
            do throws(SystemCallError) { try file.sync() } catch {
                fail(entry.copy, files: files, "\(error)")
                return false
            }
        }
        return true
    }

    private func fail(_ copy: MirrorCopy, files: [TakeFile], _ reason: String) {
        copy.closed.store(true, ordering: .releasing)
        for f in files { try? f.close() }
        logger.error("recorder: mirror: take \(copy.name): \(reason); its copy ends here, the take on \(settings.directory) goes on")
        published.withLock { $0 = .failed(reason) }
    }

    private func close(_ entry: (copy: MirrorCopy, files: [TakeFile]?)) {
        entry.copy.closed.store(true, ordering: .releasing)
        var failure: String?
        for f in entry.files ?? [] {
            do throws(SystemCallError) { try f.close() } catch { failure = failure ?? "\(error)" }
        }
        if let failure {
            logger.error("recorder: mirror: take \(entry.copy.name): closing: \(failure)")
            published.withLock { $0 = .failed(failure) }
        } else {
            logger.info("recorder: mirror: take \(entry.copy.name) copied whole")
            published.withLock { state in
                if case .copying(entry.copy.name, let directory) = state { state = .copied(take: entry.copy.name, directory: directory) }
            }
        }
    }
}
