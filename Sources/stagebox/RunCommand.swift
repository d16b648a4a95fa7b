import ArgumentParser
import CALSA
import Logging
import StageboxAppliance
import StageboxConfig
import StageboxConsole
import StageboxEngine

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the appliance: the codec loop (or a simulated board) and the bus.")

    @Option(help: "The configuration file (default: /boot/stagebox.toml, then /etc/stagebox.toml, then built-in defaults).")
    var config: String?

    @Flag(help: "Run on a simulated board paced by a timer, with no codec.")
    var simulate = false

    @Option(help: "Stop after N frames, print the statistics, and exit 0.")
    var frames: Int?

    @Option(help: "With --simulate: what the simulated codec inputs hear (sine, noise, silence; default: sine).")
    var inputSignal: String?

    @Option(help: "With --simulate: write what the codec outputs play to this WAV file.")
    var output: String?

    @Option(help: ArgumentHelp(
        "With --simulate: the inputs hear the outputs this many frames later, as through a loop cable, instead of --input-signal.",
        discussion: "At least one period (less is taken as one), at most 1000000 frames. For `stagebox latency`, period x periods frames "
            + "is Stagebox's own buffering on a codec; frames beyond it stand for the converters and the cable."))
    var loop: Int?

    @Flag(help: ArgumentHelp(
        "On a device (not with --simulate): do not wait for it between periods (tests and measurements).",
        discussion: "A plugin device that does not pace, such as null or file, then runs as fast as it takes the "
            + "audio, instead of at the rate's pace. The simulated board is paced by its clock: --speed runs it faster."))
    var freeRun = false

    @Option(help: "With --simulate: run the simulated codec clock this many times faster than real time (0.1–64; long tests).")
    var speed: Double = 1

    func validate() throws {
        if let frames, frames <= 0 { throw ValidationError("--frames must be a positive number of frames") }
        if let inputSignal, ToneSignal(rawValue: inputSignal) == nil {
            throw ValidationError("--input-signal must be sine, noise or silence, not '\(inputSignal)'")
        }
        if inputSignal != nil && !simulate { throw ValidationError("--input-signal goes with --simulate") }
        if inputSignal != nil && loop != nil {
            throw ValidationError("--input-signal and --loop both say what the inputs hear: give one")
        }
        if freeRun && simulate {
            throw ValidationError("--free-run is for a device; the simulated board is paced by its clock (--speed runs it faster)")
        }
        if output != nil && !simulate { throw ValidationError("--output goes with --simulate") }
        if !(0.1...64).contains(speed) { throw ValidationError("--speed must be from 0.1 to 64, not \(speed)") }
        if speed != 1 && !simulate { throw ValidationError("--speed goes with --simulate") }
        if loop != nil && !simulate { throw ValidationError("--loop goes with --simulate") }
        if let loop, !(1...1_000_000).contains(loop) { throw ValidationError("--loop must be from 1 to 1000000 frames, not \(loop)") }
    }

    func run() throws {
        Log.bootstrap()
        defer { Log.writer.close(waitingUpTo: 1) }
        let logger = Logger(label: "stagebox")
        StopSignals.install()
        stagebox_alsa_silence_errors()
        // Only the audio thread touches the PCMs while the loop runs, so alsa-lib's own per-PCM
        // mutex (taken around every call for plugin PCMs; `hw` needs none) only costs a lock on
        // the audio thread. A value the user set is kept.
        setenv("LIBASOUND_THREAD_SAFE", "0", 0)

        let loaded = ConfigLoader.resolve(explicit: config)
        // Every problem of the file, as check-config finds them (connections too), not only
        // those that made it fall back to the defaults.
        let problems = loaded.problems.isEmpty ? [] : loaded.file.map { CheckConfigCommand.problems(in: $0) } ?? loaded.problems
        for problem in problems { logger.error("\(problem)") }
        if !loaded.problems.isEmpty { logger.warning("the configuration has problems; running on the built-in defaults") }
        logger.info("stagebox \(StageboxVersion.string): configuration from \(loaded.source)")

        var options = ApplianceOptions()
        options.simulate = simulate
        options.frames = frames
        options.inputSignal = inputSignal.flatMap(ToneSignal.init(rawValue:)) ?? .sine
        options.output = output
        options.loop = loop
        options.speed = speed
        options.freeRun = freeRun
        options.consoleDevice = consolePlace(loaded.config.console)
        options.version = StageboxVersion.string
        let appliance: Appliance
        do {
            appliance = try Appliance(loaded, options: options, logger: logger, externalStop: { StopSignals.stopRequested })
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        defer { appliance.shutdown() }
        // A stop signal wakes the control thread (it ticks once a second when idle).
        if let wakeup = appliance.control.wakeup { StopSignals.wakes.store(dup(wakeup.descriptor), ordering: .relaxed) }
        defer { StopSignals.wakes.store(-1, ordering: .relaxed) }
        let console = startConsole(loaded.config.console, device: options.consoleDevice,
                                   shell: appliance.newConsole(), logger: logger)
        defer {
            Log.writer.redirect(to: nil)
            console?.stop()
        }
        do {
            try appliance.run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        let summary = appliance.control.statistics.snapshot().summary
        logger.info("stopped after \(appliance.control.framesProcessed.load(ordering: .relaxed)) frames")
        print("statistics: frames=\(appliance.control.framesProcessed.load(ordering: .relaxed)) \(summary)")
    }

    /// Starts the console where the configuration puts it: a serial device, stdio, or nowhere.
    /// With `--simulate` on a terminal and no device in the file, it is on stdio.
    /// Where the console goes: the configured device; with `--simulate` and none configured,
    /// the terminal stagebox runs in (or nowhere without one).
    private func consolePlace(_ section: ConsoleSection) -> String {
        guard simulate && !section.deviceGiven else { return section.device }
        return isatty(0) == 1 ? "stdio" : "none"
    }

    private func startConsole(_ section: ConsoleSection, device: String, shell console: Console,
                              logger: Logger) -> ConsoleRunner? {
        switch device {
        case "none":
            return nil
        case "stdio":
            // The terminal stagebox was started from: Ctrl-C, Ctrl-D, exit and quit stop it there.
            let runner = ConsoleRunner(console: console, input: 0, output: 1, rawTerminal: isatty(0) == 1,
                                       quit: { StopSignals.requestStop() })
            do {
                try runner.start()
            } catch {
                logger.error("console: \(error); running without a console")
                return nil
            }
            // The log on the same terminal goes above the prompt, never into the typed line.
            if Self.sameTerminal(1, 2) { Log.writer.redirect { runner.printAbove($0) } }
            return runner
        default:
            do {
                let port = try SerialPort(path: device, baud: section.baud)
                let runner = ConsoleRunner(console: console, input: port.descriptor, output: port.descriptor)
                SerialPorts.keep(port)
                try runner.start()
                logger.info("console on \(device) at \(section.baud) baud")
                return runner
            } catch {
                logger.warning("console: \(error); running without a console")
                return nil
            }
        }
    }

    /// Whether two descriptors are the same terminal (stdout and stderr in one window).
    static func sameTerminal(_ a: Int32, _ b: Int32) -> Bool {
        var sa = stat(), sb = stat()
        guard isatty(a) == 1, isatty(b) == 1, fstat(a, &sa) == 0, fstat(b, &sb) == 0 else { return false }
        return sa.st_rdev == sb.st_rdev
    }
}

/// Keeps open serial ports alive for the console's lifetime.
enum SerialPorts {
    nonisolated(unsafe) static var open: [SerialPort] = []
    static func keep(_ port: SerialPort) { open.append(port) }
}
