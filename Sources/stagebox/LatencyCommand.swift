import StageboxAppliance
import DequeModule
import ArgumentParser
import CALSA
import Logging
import StageboxClient
import StageboxDrivers
import StageboxEngine
import StageboxFormatting
import StageboxLatency
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct LatencyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Measure the round trip of a loop cable from an output to an input.",
        discussion: """
            Plays a multi-tone signal and finds, from the phases of what comes back, the delay to a \
            fraction of a frame, the polarity, and an error bound. The figure is the time from the \
            period in which the engine plays a frame to the period in which it captures it; the part \
            that is Stagebox's own buffering (period x periods: the playback buffer it writes ahead of \
            the codec) is told apart from the rest (the converters and the cable). Delays are found \
            modulo 16384 frames.

            By default it is a client of the running appliance: it connects a sender to codec.out \
            and a receiver from codec.in. With --playback and --capture it opens those PCMs itself, \
            when no appliance runs.

            Exit status: 0 with a figure, 1 on an error, 2 when no signal came back, 64 for an option \
            out of its range.
            """)

    @OptionGroup var bus: BusOptions
    @Option(help: "On the bus: the port (or PORT:CHANNEL) the stimulus goes to.") var to = "codec.out"
    @Option(help: "On the bus: the port (or PORT:CHANNEL) whose signal comes back.") var from = "codec.in"
    @Option(help: "Standalone: the ALSA PCM to play the stimulus on (with --capture).") var playback: String?
    @Option(help: "Standalone: the ALSA PCM to capture from (with --playback).") var capture: String?
    @Option(help: "Standalone: the sample rate (8000–192000).") var rate = 48000
    @Option(help: "Standalone: frames per period (16–8192).") var period = 256
    @Option(help: "Standalone: periods in the playback buffer (2–16).") var periods = 2
    @Option(help: "Standalone: the channels the PCMs are opened with (1–32).") var channels = 2
    @Option(help: "Standalone: the channel, from 1, played on and captured from.") var channel = 1
    // Unconditional: a negative value is refused in words, not taken for an option.
    @Option(name: [.customLong("timeout"), .customLong("seconds")], parsing: .unconditional,
            help: "Give up when no signal has come back for this many seconds, at most 3600 (exit status 2).")
    var timeout = 3.0
    @Flag(help: "Print the figure as one line of JSON.") var json = false

    func validate() throws {
        if (playback == nil) != (capture == nil) { throw ValidationError("--playback and --capture go together") }
        if !(timeout > 0 && timeout <= 3600) { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds, not \(timeout)") }
        if !(8000...192_000).contains(rate) { throw ValidationError("--rate must be from 8000 to 192000, not \(rate)") }
        if !(16...8192).contains(period) { throw ValidationError("--period must be from 16 to 8192 frames, not \(period)") }
        if !(2...16).contains(periods) { throw ValidationError("--periods must be from 2 to 16, not \(periods)") }
        if !(1...32).contains(channels) { throw ValidationError("--channels must be from 1 to 32, not \(channels)") }
        if !(1...channels).contains(channel) { throw ValidationError("--channel must be from 1 to --channels (\(channels)), not \(channel)") }
    }

    func run() throws {
        StopSignals.install()
        let outcome = playback != nil ? try runStandalone() : try runOnBus()
        switch outcome {
        case let .measured(figure):
            print(json ? figure.json : figure.text)
        case let .noSignal(message):
            printError("stagebox latency: \(message)")
            throw ExitCode(2)
        case .stopped:
            printError("stagebox latency: stopped before a figure was found")
            throw ExitCode(1)
        }
    }

    // MARK: On the bus

    private func runOnBus() throws -> MeterOutcome {
        let client = try bus.connect(as: "latency-\(getpid())")
        defer { client.close() }
        let ports = try busRequest { () throws(BusClientError) in try client.ports() }
        for (option, endpoint) in [("--to", to), ("--from", from)] {
            let name = portName(endpoint)
            if !ports.contains(where: { $0.name == name }) {
                printError("stagebox latency: \(option) \(name) is not on the bus; the ports are: "
                           + ports.map(\.name).joined(separator: ", "))
                throw ExitCode(1)
            }
        }
        // What comes back must not go out again: the loop would ring with the stimulus.
        let connections = try busRequest { () throws(BusClientError) in try client.connections() }
        if let c = connections.first(where: { portName($0.from) == portName(from) && portName($0.to) == portName(to) }) {
            printError("stagebox latency: \(c.from) is connected to \(c.to), so what the cable brings back would be "
                       + "played again; disconnect it first (stagebox disconnect \(c.from) \(c.to))")
            throw ExitCode(1)
        }
        let buffering = appliancePeriods(client)
        let sender = try busRequest { () throws(BusClientError) in
            try client.addSender(name: "out", title: "latency stimulus", channels: 1)
        }
        let receiver = try busRequest { () throws(BusClientError) in
            try client.addReceiver(name: "in", title: "latency capture", channels: 1)
        }
        try busRequest { () throws(BusClientError) in try client.connect(from: sender.name, to: to) }
        try busRequest { () throws(BusClientError) in try client.connect(from: from, to: receiver.name) }

        let block = client.period
        let stimulus = MultiToneStimulus()
        var meter = LatencyMeter(stimulus: stimulus, rate: client.sampleRate, timeout: timeout,
                                 where: "nothing came back from \(from) into \(receiver.name) of the stimulus sent "
                                     + "from \(sender.name) to \(to): check the loop cable from that output to that input, "
                                     + "and that neither port is muted")
        var out = [Float](repeating: 0, count: block)
        var captured = [Float](repeating: 0, count: block)
        var sent: Int64 = 0
        // The stimulus frame playing at a codec frame is the codec frame less this offset (see
        // `SenderPort.busPosition`); the least reading of the last few is the true one.
        var offsets: Deque<Int64> = []
        var lastTaken: Int64 = 0
        var glitches = sender.underruns + receiver.underruns + receiver.overruns
        func send() {
            // This loop sends as it receives, so the bus paces it: said to the sender, whose drift
            // control would otherwise (it never has to wait for room) measure the start's jitter
            // as a clock drift, resample the stimulus and smear its tones to nothing.
            sender.takeWakeups()
            out.withUnsafeMutableBufferPointer { stimulus.fill($0.baseAddress!, frames: block, from: sent) }
            out.withUnsafeBufferPointer { sender.send($0.baseAddress!, frames: block) }
            sent += Int64(block)
        }
        // A no-signal says what the two ports saw: gaps and conversions are causes to rule out.
        func explained(_ outcome: MeterOutcome) -> MeterOutcome {
            guard case let .noSignal(message) = outcome else { return outcome }
            return .noSignal(message + " (the stimulus's port: \(sender.underruns) underruns"
                             + (sender.isConverting ? ", converting" : "") + "; the capture's port: "
                             + "\(receiver.underruns) underruns, \(receiver.overruns) overruns"
                             + (receiver.isConverting ? ", converting" : "") + ")")
        }
        // Three periods ahead: the bus starts taking them at two (the sender's cushion).
        for _ in 0..<3 { send() }
        while !StopSignals.stopRequested {
            // Paced by the bus on this side too, said to the receiver: a meter that falls behind
            // (each whole period's analysis is a burst of work, slow under emulation) finds the
            // data already there and never waits, and its drift control would take the lag for a
            // clock drift and resample what came back.
            receiver.takeWakeups()
            guard receiver.waitForData(frames: block, timeoutSeconds: 0.5) else {
                if let outcome = meter.nothingCame(frames: client.sampleRate / 2) { return explained(outcome) }
                continue
            }
            captured.withUnsafeMutableBufferPointer { _ = receiver.receive(into: $0.baseAddress!, frames: block) }
            if let position = sender.busPosition, position.taken > lastTaken {
                // Only while the bus takes frames: before it starts, `taken` stands still.
                lastTaken = position.taken
                offsets.append(position.codecFrame + Int64(block) - position.taken)
                if offsets.count > 16 { offsets.removeFirst() }
            }
            let now = sender.underruns + receiver.underruns + receiver.overruns
            if now != glitches {
                // A gap on either side moves the stimulus against the codec clock: start over.
                glitches = now
                offsets.removeAll()
                meter.restart()
            }
            if let stamp = receiver.lastTimestamp, let offset = offsets.min() {
                let outcome = captured.withUnsafeBufferPointer {
                    meter.feed($0.baseAddress!, frames: block, stimulusFrame: stamp.codecFrame - offset)
                }
                if let outcome {
                    if case .measured(var figure) = outcome {
                        figure.buffering = buffering.map { Buffering(period: $0.period, periods: $0.periods) }
                        return .measured(figure)
                    }
                    return explained(outcome)
                }
            }
            while sender.fill < 3 * block { send() }
        }
        return .stopped
    }

    /// The appliance's period and periods, from its console's `status`, if it tells them.
    private func appliancePeriods(_ client: BusClient) -> (period: Int, periods: Int)? {
        guard let text = try? client.console("status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("audio") {
            let words = line.split(separator: " ").map { String($0.filter { $0 != "," }) }
            if let x = words.firstIndex(of: "x"), x > 0, x + 1 < words.count,
               let p = Int(words[x - 1]), let n = Int(words[x + 1]) { return (p, n) }
        }
        return nil
    }

    // MARK: Standalone

    private func runStandalone() throws -> MeterOutcome {
        guard let playback, let capture else { return .stopped }
        Log.bootstrap()
        defer { Log.writer.close(waitingUpTo: 1) }
        let logger = Logger(label: "stagebox.latency")
        stagebox_alsa_silence_errors()
        let engine = Engine(settings: EngineSettings(sampleRate: rate, period: period, inputs: channels, outputs: channels,
                                                     toneSignal: .silence, toneFrequency: 440, toneLevelDB: -20,
                                                     fadeMilliseconds: 0))
        let stimulus = MultiToneStimulus()
        let tap = CaptureTap(capacity: 16 * max(period, 1024))
        do {
            try engine.addPort(PortDescriptor(name: "latency.out", title: "latency stimulus", kind: .sender, channels: 1),
                               processor: StimulusPlayer(stimulus: stimulus))
            try engine.addPort(PortDescriptor(name: "latency.in", title: "latency capture", kind: .receiver, channels: 1),
                               processor: tap)
            try engine.connect(from: "latency.out", to: "codec.out:\(channel)")
            try engine.connect(from: "codec.in:\(channel)", to: "latency.in")
        } catch {
            printError("stagebox latency: \(error)")
            throw ExitCode(1)
        }
        let parameters = ALSAParameters(captureDevice: capture, playbackDevice: playback, format: .s32, sampleRate: rate,
                                        inputs: channels, outputs: channels, periods: periods,
                                        realtimePriority: 0)
        let control = DriverControl()
        let driver = ALSADriver(parameters: parameters, engine: engine, control: control)
        do {
            try driver.open()
        } catch {
            printError("stagebox latency: \(error)")
            throw ExitCode(1)
        }
        driver.close()
        var meter = LatencyMeter(stimulus: stimulus, rate: rate, timeout: timeout,
                                 where: "nothing came back on channel \(channel) of \(capture) of the stimulus played on "
                                     + "channel \(channel) of \(playback): check the loop cable from that output to that input, "
                                     + "and the mixer's levels")
        var outcome: MeterOutcome?
        var scratch = [Float](repeating: 0, count: max(period, 1024))
        let started = monotonicNanoseconds()
        do {
            try DriverSupervisor(driver: driver, logger: logger).run {
                if StopSignals.stopRequested { control.requestStop() }
                while outcome == nil, let (position, frames) = tap.take(into: &scratch) {
                    outcome = scratch.withUnsafeBufferPointer {
                        meter.feed($0.baseAddress!, frames: frames, stimulusFrame: position)
                    }
                }
                // A device that delivers nothing at all is as silent as a cable that is not there.
                if outcome == nil && meter.framesSeen == 0
                    && Double(monotonicNanoseconds() - started) / 1e9 > timeout {
                    outcome = meter.nothingCame(frames: Int(timeout * Double(rate)) + 1)
                }
                if outcome != nil { control.requestStop() }
                return true // the tap is read every tick: always busy
            }
        } catch {
            printError("stagebox latency: \(error)")
            throw ExitCode(1)
        }
        if case .measured(var figure) = outcome {
            figure.buffering = Buffering(period: period, periods: periods)
            return .measured(figure)
        }
        return outcome ?? .stopped
    }
}

/// The port of `PORT` or `PORT:CHANNEL`.
private func portName(_ endpoint: String) -> String {
    String(endpoint.split(separator: ":", maxSplits: 1).first ?? "")
}

// MARK: The meter

enum MeterOutcome {
    case measured(LatencyFigure)
    case noSignal(String)
    case stopped
}

/// Stagebox's own share of a round trip on ALSA: the playback buffer the engine writes ahead
/// of the codec. The figure is in codec frames (stream positions): what the engine plays in the
/// cycle of capture frame f goes out at playback frame f + period × periods, behind the pre-fill,
/// and a cable with no delay brings it back as capture frame f + period × periods. The capture
/// period the engine waits for is wall-clock time, not a stream position, and is not in it (on
/// `hw:Loopback` the meter finds period × periods exactly, as `jack_iodelay` finds its own
/// buffering through jackd `-S`: tools/vm/scenarios/latency-loopback).
struct Buffering {
    let period: Int
    let periods: Int
    var frames: Int { period * periods }
}

/// A measured round trip and how to print it.
struct LatencyFigure {
    let result: LatencyResult
    let rate: Int
    var buffering: Buffering?

    private func ms(_ frames: Double) -> String { fixed(frames * 1000 / Double(rate), digits: 3) }

    var text: String {
        let r = result
        var lines = [
            "round trip  \(fixed(r.delay, digits: 3)) frames = \(ms(r.delay)) ms at \(rate) Hz, "
                + "error bound ±\(fixed(r.errorBound, digits: 3)) frames",
            "polarity    \(r.polarity.rawValue)",
        ]
        if let b = buffering {
            lines.append("stagebox    \(b.frames) frames = \(ms(Double(b.frames))) ms: \(b.period) x \(b.periods) "
                         + "of playback buffer")
            let rest = r.delay - Double(b.frames)
            lines.append("the rest    \(fixed(rest, digits: 3)) frames = \(ms(rest)) ms: the converters and the cable")
        }
        lines.append("signal      \(fixed(r.levelDB, digits: 1)) dBFS back, loop gain \(fixed(r.gainDB, digits: 1)) dB, "
                     + "SNR \(fixed(r.snrDB, digits: 1)) dB, over \(r.periods) periods of 16384 frames")
        return lines.joined(separator: "\n")
    }

    var json: String {
        let r = result
        var fields = [
            "\"frames\":\(fixed(r.delay, digits: 3))", "\"ms\":\(ms(r.delay))", "\"rate\":\(rate)",
            "\"error_frames\":\(fixed(r.errorBound, digits: 3))", "\"polarity\":\"\(r.polarity.rawValue)\"",
        ]
        if let b = buffering {
            fields.append("\"buffering_frames\":\(b.frames)")
            fields.append("\"rest_frames\":\(fixed(r.delay - Double(b.frames), digits: 3))")
        }
        fields.append("\"level_dbfs\":\(fixed(r.levelDB, digits: 1))")
        fields.append("\"gain_db\":\(fixed(r.gainDB, digits: 1))")
        fields.append("\"snr_db\":\(fixed(r.snrDB, digits: 1))")
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// The analysis both modes share: captured frames in, a figure or a no-signal out.
struct LatencyMeter {
    let rate: Int
    let message: String
    private let accumulator: ToneAccumulator
    private var analyzer: LatencyAnalyzer
    private var timer: NoSignalTimer
    private(set) var framesSeen = 0

    init(stimulus: MultiToneStimulus, rate: Int, timeout: Double, where message: String) {
        self.rate = rate
        self.message = message
        accumulator = ToneAccumulator(stimulus: stimulus)
        analyzer = LatencyAnalyzer(stimulus: stimulus)
        timer = NoSignalTimer(limitFrames: Int(timeout * Double(rate)))
    }

    /// Feeds captured frames; a figure once enough periods agree, a no-signal once the timeout
    /// passed without tones.
    mutating func feed(_ samples: UnsafePointer<Float>, frames: Int, stimulusFrame: Int64) -> MeterOutcome? {
        framesSeen += frames
        guard accumulator.feed(samples, frames: frames, stimulusFrame: stimulusFrame) > 0,
              let sums = accumulator.takePeriod() else { return nil }
        let e = analyzer.add(sums)
        if let result = analyzer.result { return .measured(LatencyFigure(result: result, rate: rate)) }
        if timer.note(hasSignal: e.hasSignal, frames: sums.frames) { return noSignal }
        return nil
    }

    /// Nothing at all arrived for `frames` frames' time.
    mutating func nothingCame(frames: Int) -> MeterOutcome? {
        timer.note(hasSignal: false, frames: frames) ? noSignal : nil
    }

    private var noSignal: MeterOutcome {
        .noSignal("no signal for \(fixed(Double(timer.quietFrames) / Double(rate), digits: 1)) s: " + message)
    }

    /// Drops the period being summed (the loop moved).
    mutating func restart() { accumulator.restart() }
}
