import Logging
import StageboxAudioFiles
import StageboxEngine
import StageboxSystem

/// One audio front-end around the one engine, as Elk Sushi has one frontend interface for
/// its ALSA, offline and dummy frontends: the ALSA codec loop, the simulated board and the
/// offline renderer all implement it, and `DriverSupervisor` runs any of them the same way.
///
/// The calls come in this order: `open` (control thread), `run` (the audio thread),
/// `close` (control thread), possibly again from `open` after a failure or a pause, and
/// `finish` once at the end. `service` runs on the control thread while `run` runs.
public protocol AudioDriver: AnyObject, Sendable {
    var engine: Engine { get }
    var control: DriverControl { get }
    /// What the driver drives, for the log and the console ("simulated board", "ALSA …").
    var name: String { get }
    /// The SCHED_FIFO priority of the audio thread (0: normal scheduling).
    var realtimePriority: Int { get }
    /// Whether a clock paces the loop (a codec, the simulated board's timer), so that how the
    /// audio thread is scheduled matters; an offline render runs as fast as it can.
    var paced: Bool { get }

    /// Takes the device: opens and configures the PCMs, or the files.
    func open() throws(DriverError)
    /// The audio thread's body: starts the streams and processes periods until a stop or a
    /// pause is requested, the frame limit is reached, the input ends, or the device fails.
    /// Returns nil after a normal end. Allocates nothing and takes no lock.
    func run() -> DriverError?
    /// Releases the device (the codec is free for others until the next `open`).
    func close()
    /// Control-thread work while `run` runs, every tick: writing output files.
    func service() throws(DriverError)
    /// Whether `service` must come every 50 ms even when nothing else is in motion (a ring of
    /// periods it drains would overflow in an idle tick's second).
    var needsFrequentService: Bool { get }
    /// After the last `close`: writes out and closes what the driver produced.
    func finish() throws(DriverError)
    /// Lines for the log after `open`: what was opened and how.
    func openReport() -> [(Logger.Level, String)]
    /// A line for the log once the streams have started, or nil while they have not.
    func startReport() -> String?
}

extension AudioDriver {
    public var paced: Bool { true }
    public func service() throws(DriverError) {}
    public var needsFrequentService: Bool { false }
    public func finish() throws(DriverError) {}
    public func openReport() -> [(Logger.Level, String)] { [] }
    public func startReport() -> String? { nil }
}

/// Why a driver could not open or keep running its device.
public enum DriverError: Error, Sendable, Equatable, CustomStringConvertible {
    case alsa(ALSAError)
    case file(AudioFileError)
    /// The audio thread could not be started (a thread or memory limit).
    case thread(SystemCallError)

    public var description: String {
        switch self {
        case let .alsa(error): return error.description
        case let .file(error): return error.description
        case let .thread(error): return error.description
        }
    }

    /// Whether opening the device again later may work (it went away, or is busy), so the
    /// supervisor waits and retries instead of giving up.
    public var isRetryable: Bool {
        switch self {
        case let .alsa(error): return error.isRetryable
        case .file: return false
        case .thread: return true // a limit of the moment: the supervisor waits and tries again
        }
    }
}

extension AudioDriver {
    /// Frames per period: the engine's (`EngineSettings.period`), never a number of the
    /// driver's own.
    public var period: Int { engine.settings.period }
}
