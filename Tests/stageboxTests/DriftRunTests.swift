import Foundation
import StageboxTestSupport
import StageboxClient
import StageboxRealtime
import Synchronization
import Testing
import StageboxSystem

/// One port of a program on a clock of its own: every 10 ms of that clock (which runs `factor`
/// times as fast as the codec's, and `speed` times as fast as real time with the board) it sends
/// or takes 10 ms of audio, and notes the port's figures once a second of its stream.
final class ClockedPort: @unchecked Sendable {
    // @unchecked: `figures` is written by the port's thread only, and read after `finish()`.
    struct Figures { var fill: Int; var underruns: Int; var overruns: Int; var ratio: Double }
    /// Every block's figures for the first `detailed` blocks, to show how a port starts.
    private(set) var start: [Figures] = []
    var detailed = 0
    let label: String
    let trueRatio: Double
    /// How much faster than the codec's its clock runs.
    let factor: Double
    private(set) var figures: [Figures] = []
    private let stop = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(sender: SenderPort, rate: Int, factor: Double, speed: Double, seconds: Int) {
        label = "sender \(rate) Hz \(factor > 1 ? "+" : "-")0.5 %"
        self.factor = factor
        trueRatio = 48000 / Double(rate) / factor
        let block = rate / 100
        var samples = [Float](repeating: 0, count: block)
        var phase = 0.0
        start(factor: factor, speed: speed, seconds: seconds) {
            for i in 0..<block {
                samples[i] = Float(0.3 * sin(phase))
                phase += 2 * .pi * 440 / Double(rate)
            }
            samples.withUnsafeBufferPointer { sender.send($0.baseAddress!, frames: block) }
            return Figures(fill: sender.fill, underruns: sender.underruns, overruns: sender.overruns, ratio: sender.ratio)
        }
    }

    init(receiver: ReceiverPort, rate: Int, factor: Double, speed: Double, seconds: Int) {
        label = "receiver \(rate) Hz \(factor > 1 ? "+" : "-")0.5 %"
        self.factor = factor
        trueRatio = Double(rate) / 48000 * factor
        let block = rate / 100
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: block)
        nonisolated(unsafe) let out = samples
        start(factor: factor, speed: speed, seconds: seconds) {
            receiver.receive(into: out, frames: block)
            return Figures(fill: receiver.fill, underruns: receiver.underruns, overruns: receiver.overruns,
                           ratio: receiver.ratio)
        }
    }

    private func start(factor: Double, speed: Double, seconds: Int, tick: @escaping () -> Figures) {
        let nanos = 10_000_000 / (factor * speed)
        nonisolated(unsafe) let tick = tick // runs on this one thread only
        Thread {
            // As a call app's audio thread would (the test runs as root; elsewhere this is refused).
            _ = RealtimeThread.makeCurrentThreadRealtime(priority: 60)
            let origin = monotonicNanoseconds()
            for n in 1...(seconds * 100) where !self.stop.load(ordering: .relaxed) {
                sleepUntil(monotonicNanos: origin + Int64(Double(n) * nanos))
                let f = tick()
                if n % 100 == 0 { self.figures.append(f) }
                if n <= self.detailed { self.start.append(f) }
            }
            self.done.signal()
        }.start()
    }

    func finish() { done.wait() }
}

@Suite(.serialized) struct DriftRunTests {
    /// Ten minutes of the codec clock, at twice real time: senders and receivers at 16 kHz
    /// and 44.1 kHz whose clocks run 0.5 % fast or slow against the codec. Each converges to the
    /// true ratio within 0.01 %, keeps its fill bounded, and has no underrun or overrun after the
    /// first second, but in a second when the machine itself stalled (`StallWatch`: those are
    /// counted and shown, not failed). The ratio is the median of the second half's, so that
    /// a stall's disturbance near the end does not stand for the whole run. On a machine that
    /// stalled more than once in ten seconds of the run, the glitches and the fill are shown,
    /// not judged: the convergence still is.
    @Test func tenMinutesOfHalfAPercentDrift() throws {
        let speed = 2.0
        let seconds = Int(ProcessInfo.processInfo.environment["STAGEBOX_DRIFT_SECONDS"] ?? "") ?? 600
        // The board's audio thread at SCHED_FIFO, as on the appliance.
        let board = try SimulatedBoard(speed: speed, config: "", arguments: [], realtimePriority: 70)
        var log = ""
        defer { _ = log }
        let watch = StallWatch()
        let client = try BusClient(name: "drift", socketPath: board.socket)
        defer { client.close() }
        var ports: [ClockedPort] = []
        var keep: [AnyObject] = []
        for rate in [16000, 44100] {
            for factor in [1.005, 0.995] {
                let tag = "\(rate / 100)\(factor > 1 ? "f" : "s")"
                let s = try client.addSender(name: "s\(tag)", channels: 1, sampleRate: rate)
                let r = try client.addReceiver(name: "r\(tag)", channels: 1, sampleRate: rate)
                try client.connect(from: "tone", to: r.name)
                keep += [s, r]
                ports.append(ClockedPort(sender: s, rate: rate, factor: factor, speed: speed, seconds: seconds))
                ports.append(ClockedPort(receiver: r, rate: rate, factor: factor, speed: speed, seconds: seconds))
            }
        }
        if let watch = ProcessInfo.processInfo.environment["STAGEBOX_DRIFT_WATCH"] {
            for p in ports where p.label.contains(watch) { p.detailed = 500 }
        }
        for p in ports { p.finish() }
        let stalls = watch.finish()
        let quiet = stalls.count <= seconds / Int(speed) / 10
        for p in ports where p.detailed > 0 {
            print(p.label + "\n" + p.start.enumerated().filter { $0.offset % 5 == 0 }
                .map { "  \($0.offset * 10) ms fill \($0.element.fill) ratio \($0.element.ratio) u \($0.element.underruns)" }
                .joined(separator: "\n"))
        }
        var report: [String] = []
        for p in ports {
            let f = p.figures
            guard let first = f.first, let last = f.last, f.count >= seconds - 5 else {
                Issue.record("\(p.label): only \(f.count) seconds of figures")
                continue
            }
            let settled = f.dropFirst(1)
            let ratio = f.suffix(f.count / 2).map(\.ratio).sorted()[f.count / 4]
            let error = abs(ratio - p.trueRatio) / p.trueRatio
            let fills = settled.map(\.fill)
            let underruns = last.underruns - first.underruns, overruns = last.overruns - first.overruns
            // Figure j was taken (j + 1) seconds of the port's clock after the start.
            let second = 1e9 / (p.factor * speed)
            let glitches = zip(f, f.dropFirst()).enumerated().filter {
                $0.element.1.underruns + $0.element.1.overruns > $0.element.0.underruns + $0.element.0.overruns
            }.map(\.offset)
            let stalled = glitches.filter { j in
                let from = Int64(Double(j + 1) * second) - 1_000_000_000, to = Int64(Double(j + 2) * second) + 1_000_000_000
                return stalls.contains { (from...to).contains($0) }
            }
            let unexcused = glitches.filter { !stalled.contains($0) }
            let line = (glitches.isEmpty ? "" : "glitches in seconds \(glitches.prefix(10).map { $0 + 2 }) "
                        + "(\(stalled.count) in a stall of the machine): ")
                + "\(p.label): ratio \(String(format: "%.6f", ratio)) (true \(String(format: "%.6f", p.trueRatio)), "
                + "error \(String(format: "%.4f", error * 100)) %), fill \(fills.min()!)–\(fills.max()!), "
                + "underruns \(underruns), overruns \(overruns) after the first second"
            report.append(line)
            #expect(error < 0.0001, "\(line)")
            if quiet {
                #expect(fills.max()! < 4000, "\(line)")
                #expect(unexcused.isEmpty, "glitches outside the machine's stalls: \(line)")
            }
        }
        print("drift run, \(seconds) s of codec time at \(speed)×; the machine stalled \(stalls.count) times "
              + "(a 1 ms timer more than 4 ms late)\(quiet ? "" : ": glitches and fill not judged"):\n"
              + report.joined(separator: "\n"))
        _ = keep
        log = board.stop()
    }
}
