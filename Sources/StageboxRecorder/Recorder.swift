import DequeModule
import Logging
import StageboxEngine
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Records takes: one WAV per source, written by a thread of its own from the rings the audio
/// thread fills (`RecorderTap`), so that neither a slow disk nor a full one ever waits the audio.
///
/// The control side (`start`, `stop`, `mark`, `syncTaps`) is called from any thread; the writer
/// thread does all file work and answers through `status`.
public final class Recorder: Sendable {
    public let settings: RecorderSettings
    let engine: Engine
    let logger: Logger
    let directory: TakeDirectory
    let shared = Mutex(Shared())
    /// The taps on the engine, by source.
    let taps = Mutex<[String: RecorderTap]>([:])
    /// Held while taps are added or removed, so a start and the control tick never cross.
    private let tapChanges = Mutex<Void>(())
    private let running = Atomic<Bool>(false)
    /// The writer thread's loop, while it runs.
    private let loop = Mutex<ServiceLoop?>(nil)
    /// The copy of every take on another medium; nil with no `mirror` configured.
    let mirror: MirrorWriter?
    /// What the next take is slated as (its iXML and `bext` description).
    public let slate: Slate
    private let stateListener = Mutex<(@Sendable (RecorderState) -> Void)?>(nil)

    enum Command {
        case start(askedNanos: Int64)
        case stop(reason: String?)
        case mark(label: String)
    }

    struct Shared {
        var commands: [Command] = []
        var startAnswer: Result<RunningTake, RecorderRefusal>? {
            didSet { if startAnswer != nil { starting = false } }
        }
        /// A start was asked for and has no answer yet.
        var starting = false
        var status = RecorderStatus()
        var recent: Deque<TakeSummary> = []
    }

    /// How many ended takes `recentTakes` keeps.
    static let recentLimit = 20

    /// The recorder of `engine`'s ports; it adds its taps (`stagebox.record.SOURCE`) as it needs them.
    public init(settings: RecorderSettings, engine: Engine, logger: Logger) {
        self.settings = settings
        self.engine = engine
        self.logger = logger
        slate = Slate(settings.slate)
        directory = TakeDirectory(path: settings.directory)
        mirror = settings.mirror.isEmpty ? nil : MirrorWriter(settings: settings, logger: logger)
    }

    /// Calls `listener` on every change of state (on the thread that made it).
    public func onStateChange(_ listener: @escaping @Sendable (RecorderState) -> Void) {
        stateListener.withLock { $0 = listener }
    }

    /// Checks every take in the directory and repairs those a power cut or a kill left with a
    /// header that disagrees with their length; logs each repair and keeps the takes for
    /// `recentTakes`. Call it before `startWriter`.
    @discardableResult
    public func repairTakes() -> [TakeSummary] {
        if directory.makeIfMissing() { logger.info("recorder: made \(settings.directory)") }
        if let problem = directory.problem() {
            logger.warning("recorder: \(problem); takes are refused until it is there")
            return []
        }
        var found: [TakeSummary] = []
        for (file, outcome) in TakeRepair.repairAll(in: settings.directory) {
            let path = settings.directory + "/" + file
            switch outcome {
            case let .intact(frames):
                found.append(summary(file, frames: frames, note: nil))
            case let .repaired(headerFrames, frames, droppedBytes, markersLost):
                var note = "repaired: the header said \(headerFrames) frames, the file holds \(frames)"
                if droppedBytes > 0 { note += "; \(droppedBytes) bytes of a torn last frame cut" }
                if markersLost { note += "; its markers were torn and are lost" }
                logger.warning("recorder: \(path) \(note)")
                found.append(summary(file, frames: frames, note: note))
            case let .unreadable(reason):
                logger.warning("recorder: \(path) is not a take that can be checked (\(reason)); left alone")
            }
        }
        found = Self.joiningParts(found)
        shared.withLock { $0.recent = Deque(found.suffix(Self.recentLimit)) }
        return found
    }

    /// A split take's parts (see `TakeParts`) as one take: its first part's name, the frames
    /// and bytes of all of them, and their notes.
    static func joiningParts(_ summaries: [TakeSummary]) -> [TakeSummary] {
        var joined: [TakeSummary] = []
        var parts: [String: Int] = [:] // a take's name → its count of parts so far
        for summary in summaries {
            guard let (take, _) = TakeParts.part(of: summary.file),
                  let index = joined.lastIndex(where: { $0.file == take }) else {
                joined.append(summary)
                continue
            }
            parts[take, default: 1] += 1
            joined[index].frames += summary.frames
            joined[index].seconds += summary.seconds
            joined[index].bytes += summary.bytes
            if let note = summary.note { joined[index].note = (joined[index].note.map { $0 + "; " } ?? "") + "\(summary.file): \(note)" }
        }
        for (take, count) in parts {
            guard let index = joined.lastIndex(where: { $0.file == take }) else { continue }
            joined[index].note = (joined[index].note.map { $0 + "; " } ?? "") + "in \(count) parts"
        }
        return joined
    }

    private func summary(_ file: String, frames: Int64, note: String?) -> TakeSummary {
        let bytes = fileSize(settings.directory + "/" + file)
        return TakeSummary(file: file, frames: frames, seconds: Double(frames) / Double(settings.sampleRate),
                           bytes: bytes, note: note)
    }

    /// Starts the writer thread.
    public func startWriter() throws(SystemCallError) {
        running.store(true, ordering: .relaxed)
        let writer = TakeWriter(recorder: self)
        do {
            try mirror?.start()
            let started = try ServiceLoop(named: "the recorder's writer")
            loop.withLock { $0 = started }
            try started.start({ _ in .init(deadline: writer.round()) }, finish: { writer.finish() })
        } catch {
            loop.withLock { $0 = nil }
            mirror?.stop()
            running.store(false, ordering: .relaxed)
            throw error
        }
    }

    /// Where the copy of the takes stands; `.idle` with no mirror.
    public var mirrorState: MirrorState { mirror?.state ?? .idle }

    /// Ends a running take (its files made whole) and the writer thread.
    public func shutdown() {
        guard let writer = loop.withLock({ let l = $0; $0 = nil; return l }) else { return }
        shared.withLock { $0.commands.append(.stop(reason: nil)) }
        running.store(false, ordering: .releasing)
        writer.stop()
        mirror?.stop() // after the writer: its last take's copy gets every frame, then closes
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Every command wakes the writer, so that an idle one starts on it at once.
    private func send(_ command: Command) {
        shared.withLock { $0.commands.append(command) }
        loop.withLock { $0 }?.wake()
    }

    /// Control thread, now and then: keeps the taps the recorder needs on the engine. It needs
    /// them while a take starts or runs, and always with a pre-roll (which is the audio from
    /// before the press); otherwise it has none, and `ports` shows none. A source that is not
    /// on the bus (a client's port, not there yet) gets its tap when it comes.
    public func syncTaps() {
        tapChanges.withLock { _ in
            let needed = settings.preRollFrames > 0 || shared.withLock { $0.starting || $0.status.state == .recording }
            // The common case, every control tick of an idle appliance: nothing to add or remove.
            if !needed && taps.withLock({ $0.isEmpty }) { return }
            let ports = Dictionary(engine.ports.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            for source in settings.sources {
                let tap = taps.withLock { $0[source] }
                if let tap, !needed || ports[source] == nil || ports[tap.portName] == nil {
                    taps.withLock { _ = $0.removeValue(forKey: source) }
                    try? engine.removePort(tap.portName)
                    if needed { logger.info("recorder: \(source) left the bus") }
                } else if tap == nil, needed, let port = ports[source], port.kind != .receiver {
                    addTap(source: source, channels: port.channels)
                }
            }
        }
    }

    private func addTap(source: String, channels: Int) {
        let tap = RecorderTap(source: source, channels: channels, capacityFrames: settings.ringFrames)
        tap.open.store(settings.preRollFrames > 0, ordering: .releasing)
        do {
            try engine.addPort(.init(name: tap.portName, title: "Recorder of \(source)", kind: .receiver,
                                     channels: channels), processor: tap, ownedByStagebox: true)
            try engine.connect(from: source, to: tap.portName)
            taps.withLock { $0[source] = tap }
        } catch {
            try? engine.removePort(tap.portName)
            logger.error("recorder: cannot listen to \(source): \(error)")
        }
    }

    /// Asks for a take without waiting for its files (a button's trigger): the state becomes
    /// `recording` or `failed` when the writer has made them or could not.
    public func requestStart() {
        guard isRunning else { return announce(.failed("the recorder is not running")) }
        let asked = monotonicNanoseconds()
        shared.withLock { $0.startAnswer = nil; $0.starting = true }
        syncTaps()
        send(.start(askedNanos: asked))
    }

    /// Starts a take and returns it once its files exist; the reason when it cannot.
    public func start() -> Result<RunningTake, RecorderRefusal> {
        guard isRunning else { return .failure(.init(reason: "the recorder is not running")) }
        let asked = monotonicNanoseconds()
        shared.withLock { $0.startAnswer = nil; $0.starting = true }
        syncTaps()
        send(.start(askedNanos: asked))
        // The writer answers within one of its rounds; creating the files takes a few fsyncs.
        let deadline = asked + 10_000_000_000
        while monotonicNanoseconds() < deadline {
            if let answer = shared.withLock({ $0.startAnswer }) { return answer }
            sleepUntil(monotonicNanos: monotonicNanoseconds() + 1_000_000)
        }
        return .failure(.init(reason: "the recorder's writer did not answer within 10 s (a stalled disk?)"))
    }

    /// Ends the running take; false when there is none.
    @discardableResult
    public func stop() -> Bool {
        guard isRecording else { return false }
        send(.stop(reason: nil))
        return true
    }

    /// Drops a cue point into the running take; false when there is none.
    @discardableResult
    public func mark(label: String) -> Bool {
        guard isRecording else { return false }
        send(.mark(label: label))
        return true
    }

    public var status: RecorderStatus { shared.withLock { $0.status } }
    /// Why a take could not start now (the directory, the free space), or nil.
    public func problem() -> String? {
        directory.makeIfMissing()
        if let problem = directory.problem() { return problem }
        if let free = directory.freeBytes(), free < settings.minFreeBytes {
            return "\(settings.directory) has \(megabytes(free)) MB free, below min_free_mb (\(settings.minFreeBytes / 1_000_000))"
        }
        return nil
    }
    /// Whether a start was asked for and the writer has not answered yet.
    public var isStarting: Bool { shared.withLock { $0.starting } }
    public var isRecording: Bool { status.state == .recording }
    /// The last takes, oldest first.
    public var recentTakes: [TakeSummary] { shared.withLock { Array($0.recent) } }

    /// Sets the state (with a start's answer, in the same step: the taps are needed without a
    /// gap between starting and recording) and tells the listener of a change.
    func announce(_ state: RecorderState, answer: Result<RunningTake, RecorderRefusal>? = nil) {
        let changed = shared.withLock { s in
            defer {
                s.status.state = state
                if let answer { s.startAnswer = answer }
            }
            return s.status.state != state
        }
        if changed, let listener = stateListener.withLock({ $0 }) { listener(state) }
    }
}

/// Bytes in megabytes (10^6, as `min_free_mb` counts them), one decimal.
func megabytes(_ bytes: UInt64) -> String { formatSeconds(Double(bytes) / 1_000_000) }

func fileSize(_ path: String) -> UInt64 {
    var st = stat()
    return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
}
