import Foundation
import StageboxTestSupport
import Testing
import Logging
import StageboxEngine
import StageboxClient
import StageboxBusServer
import StageboxDrivers
import StageboxRealtime
import StageboxTriggers

/// A running simulated board with the bus server on a private socket: the real engine paced
/// by the clock, the real socket, real shared memory. Clients connect with the real library.
final class BusFixture: @unchecked Sendable {
    let socketPath: String
    let engine: Engine
    let control = DriverControl()
    let server: BusServer
    let triggers: TriggerBoard
    private let driver: SimulatedDriver
    private let thread: RealtimeThread
    /// Whether the audio thread got SCHED_FIFO.
    let outcome = RealtimeGrant()

    init(period: Int = 64, filterDeadlinePercent: Int = 25) throws {
        socketPath = FileManager.default.temporaryDirectory.appendingPathComponent("sb-\(UUID().uuidString.prefix(8)).sock").path
        engine = Engine(settings: EngineSettings(sampleRate: 48000, period: period, inputs: 2, outputs: 2,
                                                 toneSignal: .silence))
        triggers = TriggerBoard()
        let engine = self.engine
        triggers.add(name: "mute", title: "Mute the codec inputs") {
            let muted = !((try? engine.isMuted("codec.in")) ?? false)
            try? engine.setMuted("codec.in", muted)
            return muted ? .selected : .normal
        }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        server = try BusServer(settings: BusServerSettings(socketPath: socketPath, maxClients: 8, maxPortsPerClient: 4,
                                                           filterDeadlinePercent: filterDeadlinePercent),
                               engine: engine, triggers: triggers, logger: logger, serverVersion: "test")
        try server.start()
        driver = SimulatedDriver(engine: engine, control: control, inputSignal: .silence)
        let driver = self.driver
        let outcome = self.outcome
        thread = RealtimeThread {
            // As the appliance does: SCHED_FIFO where the system allows it (root, or an rtprio limit).
            outcome.granted = RealtimeThread.makeCurrentThreadRealtime(priority: 70) == .fifo(priority: 70, asked: 70)
            _ = driver.run()
        }
        try thread.start()
    }

    func stop() {
        control.requestStop()
        thread.join()
        server.stop()
    }

    var periods: Int { control.statistics.periods.load(ordering: .relaxed) }

    func client(_ name: String) throws -> BusClient { try BusClient(name: name, socketPath: socketPath) }
}

/// Waits until `condition` holds or `seconds` pass.
func eventually(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}

/// Receives `frames` frames from `port` (waiting for them), interleaved.
func collect(_ port: ReceiverPort, frames: Int, block: Int = 64) -> [Float] {
    var out = [Float](repeating: 0, count: frames * port.channels)
    var done = 0
    while done < frames {
        let n = min(block, frames - done)
        guard port.waitForData(frames: n, timeoutSeconds: 10) else { break }
        out.withUnsafeMutableBufferPointer { _ = port.receive(into: $0.baseAddress! + done * port.channels, frames: n) }
        done += n
    }
    return out
}

/// Receives a 16-bit stream from `port` until `finished()` holds and half a second of silence
/// in a row has followed (by then everything sent has passed the bus), or `seconds` pass.
/// Not a fixed count of frames: a reader that falls behind loses frames to overruns, and a
/// sender that runs dry adds silence, so no count says when the stream is over.
func receiveStream(_ port: ReceiverPort, until finished: () -> Bool, seconds: Double = 120) -> [Int16] {
    // Kept cheap per frame: under emulation a slow reader overruns its ring.
    let channels = port.channels
    var received = [Int16](repeating: 0, count: 48000 * 4 * channels)
    var done = 0
    var silentRun = 0
    let end = Date().addingTimeInterval(seconds)
    while Date() < end && !(silentRun >= 24000 && finished()) {
        guard port.waitForData(frames: 64, timeoutSeconds: 1) else { continue }
        if done + 64 * channels > received.count { received += [Int16](repeating: 0, count: received.count) }
        received.withUnsafeMutableBufferPointer { all in
            let block = all.baseAddress! + done
            _ = port.receive(int16: block, frames: 64)
            for sample in 0..<(64 * channels) {
                if block[sample] != 0 { silentRun = -1 - sample / channels } // the frames after it count
            }
            silentRun += 64
        }
        done += 64 * channels
    }
    return Array(received.prefix(done))
}

/// Judges a 16-bit stream that crossed the bus at equal rates: bit for bit, with only the gaps
/// `streamDifference` allows. One exception, by design: a reader that falls so far behind that
/// its ring overruns again and again looks to the drift correction like a slow clock, which then
/// converts its rate; from then on no sample is the one sent. That happens only on a starved
/// machine (under emulation it does, and then it is said); a reader that kept up never converts.
func judgeBitExact(received: [Int16], sent: [Int16], port: ReceiverPort, what: String,
                   sourceLocation: SourceLocation = #_sourceLocation) {
    if port.isConverting {
        #expect(port.overruns > 0, "\(what): the rate converted though the reader never fell behind (ratio \(port.ratio))",
                sourceLocation: sourceLocation)
        print("\(what): the reader fell behind (\(port.overruns) overruns) and drift correction converted its rate; bit-exactness not judged")
        return
    }
    #expect(streamDifference(received: received, sent: sent, channels: port.channels, mayDrop: port.overruns > 0) == nil,
            "\(what): overruns \(port.overruns)", sourceLocation: sourceLocation)
}

final class RealtimeGrant: @unchecked Sendable {
    var granted = false
}

/// What a mono receiver delivered while `readUntilRun` looked for a run of one value.
struct RunSearch {
    var found = false
    /// Every sample read, the run included.
    var seen: [Float] = []

    /// How often each value was seen, for a failure message: "0.25×4800 0.5×256".
    var summary: String {
        var counts: [Float: Int] = [:]
        for v in seen { counts[v, default: 0] += 1 }
        return counts.sorted { $0.value > $1.value }.prefix(6).map { "\($0.key)×\($0.value)" }.joined(separator: " ")
    }
}

/// Reads mono `port` until `length` frames in a row hold `value`, or `seconds` pass.
///
/// A count of right samples in a fixed window is a timing claim: on a loaded machine the feeding
/// thread or the reader is starved now and then, and the window fills with silence. What the
/// bus's logic promises is that the value arrives and then stays, which this checks instead.
func readUntilRun(of value: Float, length: Int, from port: ReceiverPort, seconds: Double = 10) -> RunSearch {
    var search = RunSearch()
    var run = 0
    let end = Date().addingTimeInterval(seconds)
    while run < length && Date() < end {
        let block = collect(port, frames: 64)
        for v in block {
            run = abs(v - value) < 1e-6 ? run + 1 : 0
            if run == length { break }
        }
        search.seen += block
    }
    search.found = run >= length
    return search
}
