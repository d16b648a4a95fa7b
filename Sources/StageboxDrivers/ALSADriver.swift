import CALSA
import Logging
import StageboxEngine
import StageboxRealtime
import Synchronization
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The product's codec loop: full-duplex ALSA with mmap access, woken by the period interrupt.
///
/// Follows alsa-lib's `test/latency.c` (linked streams, pre-fill, one start) and `test/pcm.c`
/// (`direct_loop`: avail → mmap_begin → work on the areas → mmap_commit; `POLLERR` means the
/// stream stopped, and its state says why). `open` and `close` run on a control thread; `run`
/// is the audio thread's body.
///
/// `@unchecked Sendable`: the PCMs and poll descriptors are touched by `open`/`close` on the
/// control thread and by `run` on the audio thread, never at once (`DriverSupervisor` joins the
/// audio thread before it closes); what other threads read is atomic.
public final class ALSADriver: AudioDriver, @unchecked Sendable {
    public let parameters: ALSAParameters
    public let engine: Engine
    public let control: DriverControl
    let pacing: Pacing
    private let config: ALSAConfigText?

    private var capture: PCMDevice?
    private var playback: PCMDevice?
    private var fds: UnsafeMutablePointer<pollfd>?
    private var captureFDs = 0
    private var playbackFDs = 0
    private(set) var captureStatus: OpaquePointer?
    private(set) var playbackStatus: OpaquePointer?

    /// Whether `snd_pcm_link` joined the two streams (plugins answer -ENOSYS).
    public let linked = Atomic<Bool>(false)
    /// How the running loop waits between periods.
    public let waitMode = Atomic<WaitMode>(.deviceInterrupt)
    /// The trigger timestamps of the last start, monotonic nanoseconds.
    public let captureTrigger = Atomic<Int>(0)
    public let playbackTrigger = Atomic<Int>(0)

    /// Whether the running streams are linked (read from any thread).
    public var isLinked: Bool { linked.load(ordering: .relaxed) }

    /// What the loop waits on between periods.
    public enum WaitMode: UInt8, AtomicRepresentable, Sendable {
        /// The period interrupt, through `poll` on the PCMs' descriptors.
        case deviceInterrupt
        /// A timer at the period: for plugins that do not pace (`null`, `file`).
        case timer
        /// No wait at all (`Pacing.free`).
        case none
    }

    public var currentWaitMode: WaitMode { waitMode.load(ordering: .relaxed) }

    public var name: String { "ALSA capture \(parameters.captureDevice), playback \(parameters.playbackDevice)" }
    public var realtimePriority: Int { parameters.realtimePriority }
    /// The buffer in frames: the engine's period times the periods asked for.
    var bufferFrames: Int { period * parameters.periods }
    var periodNanos: Int64 { Int64(period) * 1_000_000_000 / Int64(parameters.sampleRate) }
    /// Kept between runs; a local of the audio thread's while one runs (see `loop`).
    private var state: LoopState

    /// What the loop carries from period to period.
    struct LoopState {
        var framePosition: Int64 = 0
        /// The next period boundary when a timer paces the loop.
        var nextDeadline: Int64 = 0
        var timing: CycleSupervision
    }

    public init(parameters: ALSAParameters, engine: Engine, control: DriverControl,
                pacing: Pacing = .automatic, config: ALSAConfigText? = nil) {
        self.parameters = parameters
        self.engine = engine
        self.control = control
        self.pacing = pacing
        self.config = config
        let periodNanos = Int64(engine.settings.period) * 1_000_000_000 / Int64(parameters.sampleRate)
        state = LoopState(timing: CycleSupervision(control: control, periodNanos: periodNanos))
    }

    deinit { close() }

    // MARK: Control thread

    /// Opens and configures both streams and links them. A capture device named `none` (a DAC
    /// without an ADC) opens playback alone; the codec inputs then carry silence.
    public func open() throws(DriverError) {
        do { try openStreams() } catch { throw .alsa(error) }
    }

    private func openStreams() throws(ALSAError) {
        close()
        captureTrigger.store(0, ordering: .relaxed)
        playbackTrigger.store(0, ordering: .relaxed)
        let p = parameters
        var cap: PCMDevice?
        if p.captureDevice != ALSAParameters.noCapture {
            cap = try PCMDevice(name: p.captureDevice, stream: SND_PCM_STREAM_CAPTURE, channels: p.inputs,
                                parameters: p, period: period, config: config)
        }
        let play = try PCMDevice(name: p.playbackDevice, stream: SND_PCM_STREAM_PLAYBACK, channels: p.outputs,
                                 parameters: p, period: period, config: config)
        capture = cap
        playback = play
        linked.store(cap.map { snd_pcm_link($0.handle, play.handle) == 0 } ?? false, ordering: .relaxed)
        captureFDs = cap?.pollDescriptorCount ?? 0
        playbackFDs = play.pollDescriptorCount
        let all = UnsafeMutablePointer<pollfd>.allocate(capacity: captureFDs + playbackFDs)
        cap?.fillPollDescriptors(all, count: captureFDs)
        play.fillPollDescriptors(all + captureFDs, count: playbackFDs)
        fds = all
        snd_pcm_status_malloc(&captureStatus)
        snd_pcm_status_malloc(&playbackStatus)
    }

    /// Closes both streams (a file PCM writes out what it held back).
    public func close() {
        if let cap = capture, linked.load(ordering: .relaxed) { snd_pcm_unlink(cap.handle) }
        capture = nil
        playback = nil
        fds?.deallocate()
        fds = nil
        if let s = captureStatus { snd_pcm_status_free(s) }
        if let s = playbackStatus { snd_pcm_status_free(s) }
        captureStatus = nil
        playbackStatus = nil
    }

    // MARK: Audio thread

    /// Runs the loop until a stop or pause is requested, the frame limit is reached, or the
    /// device goes away. Returns nil after a normal stop. Allocates nothing and takes no lock.
    public func run() -> DriverError? {
        loop().map { .alsa($0) }
    }

    private func loop() -> ALSAError? {
        guard let play = playback, let fds else {
            return .call(device: parameters.playbackDevice, what: "run before open", code: -Int32(EBADFD))
        }
        let cap = capture // nil: playback only
        let stats = control.statistics
        stats.audioThread.store(currentThreadID(), ordering: .relaxed)
        defer { stats.audioThread.store(0, ordering: .relaxed) }
        // The position and the timing live in a local while the loop runs: a class's stored
        // properties are checked for exclusive access at run time on every touch, a local's
        // when it compiles.
        var s = state
        defer { state = s }
        if let error = start(cap, play, &s) { return error }
        let period = self.period
        let timeoutMs = Int32(max(1, (2 * periodNanos + 999_999) / 1_000_000))
        // Which streams the next poll waits on: a stream that already has a period ready is
        // left out, or poll would return at once for it, again and again, until the other's
        // interrupt comes (a busy loop at real-time priority; seen with snd-aloop, whose two
        // streams run on separate timers, and on USB cards).
        var waitCapture = cap != nil
        var waitPlayback = true

        while !control.shouldStop() {
            // Wait for the period interrupt (or the timer, for devices that do not pace).
            switch waitMode.load(ordering: .relaxed) {
            case .deviceInterrupt:
                // The descriptors lie capture first, then playback: either part, or both.
                let pollCapture = waitCapture
                let pollPlayback = waitPlayback || !pollCapture
                let first = pollCapture ? fds : fds + captureFDs
                let count = (pollCapture ? captureFDs : 0) + (pollPlayback ? playbackFDs : 0)
                waitCapture = cap != nil
                waitPlayback = true
                let rc = pollDescriptors(first, count: count, timeoutMs: timeoutMs)
                if rc == 0 {
                    let t = monotonicNanoseconds()
                    stats.pollTimeouts.add(1, ordering: .relaxed)
                    if let error = recover(cap, play, code: -Int32(EPIPE), inCapture: true, at: t, kind: .pollTimeout, &s) {
                        return error
                    }
                    continue
                }
                if rc < 0 {
                    // EINTR: a signal for someone else; wait again. Anything else would fail
                    // again at once: give up the run and let the supervisor reopen after a pause.
                    let code = errno
                    if code == EINTR { continue }
                    return .pollFailed(device: parameters.playbackDevice, code: -code)
                }
                var captureEvents: UInt16 = 0
                var playbackEvents: UInt16 = 0
                if let cap, pollCapture {
                    snd_pcm_poll_descriptors_revents(cap.handle, fds, UInt32(captureFDs), &captureEvents)
                }
                if pollPlayback {
                    snd_pcm_poll_descriptors_revents(play.handle, fds + captureFDs, UInt32(playbackFDs), &playbackEvents)
                }
                // As test/pcm.c: an error on a stream's descriptors means it stopped; its state
                // says whether it overran, was suspended or went away.
                let error = UInt16(POLLERR)
                if (captureEvents | playbackEvents) & error != 0 {
                    let inCapture = captureEvents & error != 0
                    let failing = inCapture ? (cap ?? play) : play
                    let t = monotonicNanoseconds()
                    let kind: AudioEvent.Kind = inCapture ? .captureXrun : .playbackXrun
                    if let e = recover(cap, play, code: Self.stoppedCode(failing), inCapture: inCapture, at: t, kind: kind, &s) {
                        return e
                    }
                    continue
                }
            case .timer:
                sleepUntil(monotonicNanos: s.nextDeadline)
                s.nextDeadline += periodNanos
            case .none:
                break
            }
            let now = monotonicNanoseconds()
            // The stream the wakeup is timed by (capture, else playback): what it had ready,
            // read with its timestamp, stands in for the loop's first look at it (a kernel
            // PCM's only; see `noteWakeup`).
            var stampedAvail = noteWakeup(at: now, cap ?? play, &s.timing)
            if control.takeRestartRequest() {
                if let e = recover(cap, play, code: 0, inCapture: true, at: now, kind: .restart, &s) { return e }
                continue
            }

            // Process every whole period both streams have room for. A period starts where the
            // one before ended, the first at the wakeup: two looks at the clock a period, not
            // three (each is a system call where the vDSO cannot read the clock source: HPET).
            var periodStart = now
            processing: while !control.shouldStop() {
                // Without capture the playback side alone says when a period is due.
                let ca = cap.map { stampedAvail ?? snd_pcm_avail_update($0.handle) } ?? snd_pcm_sframes_t(period)
                if ca < 0 {
                    if let e = recover(cap, play, code: Int32(ca), inCapture: true, at: now, kind: .captureXrun, &s) { return e }
                    break
                }
                let pa = (cap == nil ? stampedAvail : nil) ?? snd_pcm_avail_update(play.handle)
                stampedAvail = nil
                if pa < 0 {
                    if let e = recover(cap, play, code: Int32(pa), inCapture: false, at: now, kind: .playbackXrun, &s) { return e }
                    break
                }
                if ca < period || pa < period {
                    // Wait next for what is missing (an xrun still shows: avail, or a timeout).
                    waitCapture = cap != nil && ca < period
                    waitPlayback = pa < period
                    break
                }
                let t0 = periodStart
                let waiting = cap == nil ? 0 : Int64(ca) // frames captured before this wakeup
                let cycle = CycleInfo(framePosition: s.framePosition,
                                      hostTimeNanos: t0 - waiting * 1_000_000_000 / Int64(parameters.sampleRate),
                                      sampleRate: parameters.sampleRate, startNanos: t0)
                var got = period
                if let cap {
                    got = cap.transfer(engine.captureBuffer, frames: period)
                } else {
                    engine.captureBuffer.clear(frames: period)
                }
                if got < 0 {
                    if let e = recover(cap, play, code: Int32(got), inCapture: true, at: t0, kind: .captureXrun, &s) { return e }
                    break
                }
                engine.process(frames: period, cycle: cycle)
                let put = play.transfer(engine.playbackBuffer, frames: period)
                if put < 0 {
                    if let e = recover(cap, play, code: Int32(put), inCapture: false, at: t0, kind: .playbackXrun, &s) { return e }
                    break
                }
                s.framePosition += Int64(period)
                periodStart = s.timing.cycleDone(frames: period, startedAt: t0)
                switch waitMode.load(ordering: .relaxed) {
                case .timer: break processing // the timer paces one period at a time
                case .deviceInterrupt:
                    // Look again only when what both streams had ready held a second period.
                    // Where the status cannot be mmapped (arm64, ARM) each look is a SYNC_PTR
                    // ioctl; a period that came while this one ran wakes the next poll at once.
                    let capturePending = cap != nil && ca - period < period
                    let playbackPending = pa - period < period
                    if capturePending || playbackPending {
                        waitCapture = capturePending
                        waitPlayback = playbackPending
                        break processing
                    }
                case .none: continue // nothing paces it: look again
                }
            }
        }
        if let cap { snd_pcm_drop(cap.handle) }
        if !linked.load(ordering: .relaxed) { snd_pcm_drop(play.handle) }
        return nil
    }

    /// Supervises the wakeup: paced by the device, its lateness is measured from the device's
    /// own timestamp of the period boundary. Returns the frames the stream had ready (capture)
    /// or room for (playback) at that look; nil when it did not look, or when the stream is a
    /// plugin, whose timestamp call answers with its slave's avail and leaves its own pointer
    /// where it was (the loop's `avail_update` moves it).
    @inline(__always)
    private func noteWakeup(at now: Int64, _ stamped: PCMDevice, _ timing: inout CycleSupervision) -> snd_pcm_sframes_t? {
        let mode = waitMode.load(ordering: .relaxed)
        var due: Int64 = 0
        var room: snd_pcm_sframes_t?
        if mode == .deviceInterrupt {
            var avail: snd_pcm_uframes_t = 0
            var ts = snd_htimestamp_t()
            // On an error (an xrun) the loop's own look at the stream reads and handles it.
            if snd_pcm_htimestamp(stamped.handle, &avail, &ts) == 0 {
                due = nanoseconds(ts)
                // A kernel's avail is at most its buffer: a value past Int32 is no count (and
                // would overflow the cycle's time below).
                if stamped.isHardware && avail <= snd_pcm_uframes_t(Int32.max) { room = snd_pcm_sframes_t(avail) }
            }
        }
        timing.wakeup(at: now, due: due, paced: mode != .none)
        return room
    }
}
