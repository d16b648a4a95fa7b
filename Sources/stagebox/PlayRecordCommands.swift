import ArgumentParser
import StageboxFormatting
import StageboxPortRules
import StageboxAudioFiles
import StageboxClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Play an audio file onto the bus through a sender port.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The audio file: a WAV, or anything else this build's libsndfile reads (as stagebox render).") var file: String
    @Option(help: "The sender port to create, CLIENT.PORT.") var port: String
    @Option(help: "Connect the port to this receiver (or filter); wait for it to appear on the bus (see --wait).")
    var to: String?
    @Option(help: "With --to: how many seconds to wait for it to appear (0: it must be there now).") var wait = 10.0

    func validate() throws {
        _ = try splitPortName(port)
        if !(wait >= 0) { throw ValidationError("--wait must be 0 or more seconds, not \(wait)") }
    }

    func run() throws {
        let (clientName, portName) = try splitPortName(port)
        let reader: AudioFileReader
        do { reader = try AudioFileReader(path: file) } catch {
            printError("stagebox play: \(error)")
            throw ExitCode(1)
        }
        if let note = reader.headerNote { printError("stagebox play: \(file): \(note)") }
        StopSignals.install()
        let client = try bus.connect(as: clientName)
        defer { client.close() }
        let sender = try busRequest { () throws(BusClientError) in
            try client.addSender(name: portName, title: file, channels: reader.channels, sampleRate: reader.sampleRate)
        }
        if let to {
            try waitForPort(to, on: client, seconds: wait, command: "play")
            try busRequest { () throws(BusClientError) in try client.connect(from: sender.name, to: to) }
            // A new connection fades in over one period: start the file once it has.
            for _ in 0..<100 { if sender.isConnected { break }; usleep(10_000) }
            usleep(UInt32(4 * client.period * 1_000_000 / max(1, client.sampleRate)) + 5000)
        }
        let block = 1024
        var samples = [Float](repeating: 0, count: block * reader.channels)
        var played = 0
        while !StopSignals.stopRequested {
            let n = try samples.withUnsafeMutableBufferPointer { p in
                do { return try reader.read(into: p.baseAddress!, frames: block) } catch {
                    printError("stagebox play: \(error)")
                    throw ExitCode(1)
                }
            }
            if n == 0 { break }
            // Pace on the bus: wait for room rather than overrun the ring.
            while !sender.waitForSpace(frames: n, timeoutSeconds: 0.5) {
                if StopSignals.stopRequested { break }
                try exitIfTheBusWentAway(client, "play", "\(played) frames of \(file) were played")
            }
            samples.withUnsafeBufferPointer { sender.send($0.baseAddress!, frames: n) }
            played += n
        }
        _ = sender.drain(timeoutSeconds: 5)
        if StopSignals.stopRequested && played < reader.frames {
            print("stopped after \(played) of \(reader.frames) frames from \(file) as \(sender.name)")
        } else {
            print("played \(played) frames from \(file) as \(sender.name)")
        }
    }
}

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "record", abstract: "Record what the bus sends to a receiver port into a WAV file.")
    @OptionGroup var bus: BusOptions
    @Argument(help: "The WAV file to write.") var file: String
    @Option(help: "The receiver port to create, CLIENT.PORT.") var port: String
    @Option(help: "Connect this sender (or filter) to the port; wait for it to appear on the bus (see --wait).")
    var from: String?
    @Option(help: "With --from: how many seconds to wait for it to appear (0: it must be there now).") var wait = 10.0
    // Unconditional: a negative value is refused in words, not taken for an option.
    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until interrupted).") var seconds: Double?
    @Option(help: "Channels to record (1–32).") var channels = 2
    @Option(help: "Sample encoding: PCM_16, PCM_24, PCM_32 or FLOAT.") var encoding = "FLOAT"

    func validate() throws {
        _ = try splitPortName(port)
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0, not \(seconds)") }
        if !(wait >= 0) { throw ValidationError("--wait must be 0 or more seconds, not \(wait)") }
        if !PortRules.channelRange.contains(channels) {
            let r = PortRules.channelRange
            throw ValidationError("--channels must be from \(r.lowerBound) to \(r.upperBound), not \(channels)")
        }
        if AudioFileEncoding(rawValue: encoding) == nil {
            throw ValidationError("--encoding must be PCM_16, PCM_24, PCM_32 or FLOAT, not '\(encoding)'")
        }
    }

    func run() throws {
        let (clientName, portName) = try splitPortName(port)
        let enc = AudioFileEncoding(rawValue: encoding) ?? .float32
        StopSignals.install()
        let client = try bus.connect(as: clientName)
        defer { client.close() }
        // The source first: a record that cannot start leaves no empty file behind, and the port
        // is made only once there is something to hear (a port made earlier would fill its ring
        // with silence while waiting, and the take would start with it).
        if let from { try waitForPort(from, on: client, seconds: wait, command: "record") }
        let receiver = try busRequest { () throws(BusClientError) in
            try client.addReceiver(name: portName, title: file, channels: channels)
        }
        if let from {
            try busRequest { () throws(BusClientError) in try client.connect(from: from, to: receiver.name) }
        }
        let writer: AudioFileWriter
        do { writer = try AudioFileWriter(path: file, sampleRate: client.sampleRate, channels: channels, encoding: enc) } catch {
            printError("stagebox record: \(error)")
            throw ExitCode(1)
        }
        let limit = seconds.map { Int($0 * Double(client.sampleRate)) }
        // 20 ms at a time (or a period, if longer): a file has no use for a wakeup every period.
        let block = max(client.period, client.sampleRate / 50)
        var samples = [Float](repeating: 0, count: block * channels)
        var recorded = 0
        while !StopSignals.stopRequested && recorded < (limit ?? Int.max) {
            guard receiver.waitForData(frames: block, timeoutSeconds: 0.5) else {
                // A bus that went away sends nothing more: the file keeps what came, whole.
                try exitIfTheBusWentAway(client, "record", "\(file) keeps the \(recorded) frames recorded before") {
                    do { try writer.close() } catch { printError("stagebox record: \(error)") }
                }
                continue
            }
            let n = min(block, (limit ?? Int.max) - recorded)
            samples.withUnsafeMutableBufferPointer { _ = receiver.receive(into: $0.baseAddress!, frames: n) }
            do { try samples.withBuffer { p throws(AudioFileError) in try writer.write(p.baseAddress!, frames: n) } } catch {
                printError("stagebox record: \(error)")
                throw ExitCode(1)
            }
            recorded += n
        }
        do { try writer.close() } catch { printError("stagebox record: \(error)"); throw ExitCode(1) }
        print("recorded \(recorded) frames to \(file) from \(receiver.name) (underruns \(receiver.underruns), overruns \(receiver.overruns))")
    }
}

/// Ends a command whose bus went away (the server stopped or died): nothing more will come or
/// be taken, so it runs `first` (a file to close), says why and what it did, and exits 1
/// instead of waiting for ever.
private func exitIfTheBusWentAway(_ client: BusClient, _ command: String, _ done: String,
                                  first: () -> Void = {}) throws {
    guard let lost = client.connection.lostReason else { return }
    first()
    printError("stagebox \(command): the bus went away (\(lost)); \(done)")
    throw ExitCode(1)
}

/// Waits until `endpoint`'s port (PORT or PORT:CHANNEL) is on the bus, or fails after `seconds`
/// naming what is there.
private func waitForPort(_ endpoint: String, on client: BusClient, seconds: Double, command: String) throws {
    let name = String(endpoint.split(separator: ":", maxSplits: 1).first ?? "")
    let deadline = monotonicSeconds() + seconds
    var told = false
    while true {
        let ports = try busRequest { () throws(BusClientError) in try client.ports() }
        if ports.contains(where: { $0.name == name }) { return }
        if monotonicSeconds() >= deadline || StopSignals.stopRequested {
            printError("stagebox \(command): \(name) did not appear on the bus within \(fixed(seconds, digits: 1)) s; "
                       + "the ports are: " + ports.map(\.name).joined(separator: ", "))
            throw ExitCode(1)
        }
        if !told {
            printError("waiting up to \(fixed(seconds, digits: 1)) s for \(name) to appear on the bus")
            told = true
        }
        usleep(100_000)
    }
}

private func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

struct NoiseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noise",
        abstract: "Publish white noise: 10 ms frames of 16-bit samples paced by usleep, like the Vonage sample's publisher.")
    @OptionGroup var bus: BusOptions
    @Option(help: "The sender port to create, CLIENT.PORT.") var port: String
    @Option(help: "Connect the port to this receiver (or filter).") var to: String?
    @Option(help: "The program's sample rate (8000–192000).") var rate = 48000
    @Option(help: "Channels of the noise, each its own (1–32).") var channels = 1
    // Unconditional: the value is negative, and must not be taken for an option.
    @Option(parsing: .unconditional, help: "Level in dBFS, at most 0 (for example -6).") var levelDB = -20.0
    // Unconditional: a negative value is refused in words, not taken for an option.
    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until interrupted).") var seconds: Double?

    func validate() throws {
        _ = try splitPortName(port)
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0, not \(seconds)") }
        if !(levelDB <= 0) { throw ValidationError("--level-db must be 0 or less, not \(levelDB)") }
        if !(8000...192_000).contains(rate) { throw ValidationError("--rate must be from 8000 to 192000, not \(rate)") }
        if !PortRules.channelRange.contains(channels) {
            let r = PortRules.channelRange
            throw ValidationError("--channels must be from \(r.lowerBound) to \(r.upperBound), not \(channels)")
        }
    }

    func run() throws {
        let (clientName, portName) = try splitPortName(port)
        StopSignals.install()
        let client = try bus.connect(as: clientName)
        defer { client.close() }
        let sender = try busRequest { () throws(BusClientError) in
            try client.addSender(name: portName, title: "white noise", channels: channels, sampleRate: rate, format: .int16)
        }
        if let to { try busRequest { () throws(BusClientError) in try client.connect(from: sender.name, to: to) } }
        let frames = rate / 100
        var samples = [Int16](repeating: 0, count: frames * channels)
        let amplitude = 32767 * pow(10, levelDB / 20)
        var state: UInt32 = 0x1234_5678
        var sent = 0
        let limit = seconds.map { Int($0 * Double(rate)) } ?? Int.max
        while !StopSignals.stopRequested && sent < limit {
            for i in 0..<samples.count {
                state ^= state << 13; state ^= state >> 17; state ^= state << 5
                samples[i] = Int16((Double(state) / Double(UInt32.max) * 2 - 1) * amplitude)
            }
            try exitIfTheBusWentAway(client, "noise", "\(sent) frames were sent")
            samples.withUnsafeBufferPointer { sender.send(int16: $0.baseAddress!, frames: frames) }
            sent += frames
            usleep(10_000)
        }
        print("sent \(sent) frames of noise as \(sender.name) (fill \(sender.fill), underruns \(sender.underruns), "
              + "overruns \(sender.overruns), ratio \(fixed(sender.ratio, digits: 4)))")
    }
}
