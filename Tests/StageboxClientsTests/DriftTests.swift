import Synchronization
import Foundation
import StageboxClient
import StageboxRealtime
import Testing

/// A client thread that moves 10 ms frames on a clock of its own, `ppm` parts per million off.
private final class PacedClient: @unchecked Sendable {
    var fills: [Int] = []
    private let stopFlag = Atomic<Bool>(false)
    var stop: Bool {
        get { stopFlag.load(ordering: .relaxed) }
        set { stopFlag.store(newValue, ordering: .relaxed) }
    }
    private let finished = DispatchSemaphore(value: 0)

    /// Stops the thread and waits until it has ended (its `fills` are then safe to read).
    func finish() {
        stop = true
        finished.wait()
    }

    func run(every nanos: Int64, _ body: @escaping @Sendable () -> Int) -> Thread {
        let t = Thread {
            var deadline = monotonicNanoseconds()
            var last = deadline
            while !self.stop {
                deadline += nanos
                sleepUntil(monotonicNanos: deadline)
                let fill = body()
                if monotonicNanoseconds() - last >= 1_000_000_000 {
                    self.fills.append(fill)
                    last = monotonicNanoseconds()
                }
            }
            self.finished.signal()
        }
        t.start()
        return t
    }
}

extension BusTests {
    @Suite struct DriftTests {
        /// A sender pushing 10 ms frames at 48 kHz on a clock 0.5 % fast, and a receiver at 16 kHz pulling
        /// 10 ms frames on a clock 0.5 % slow, for 60 s: the fill levels stay bounded, the drift is
        /// absorbed by the ratio, and glitches are rare.
        @Test func clientsHalfAPercentOffTheCodecClockStayBounded() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let client = try bus.client("drift")
            let sender = try client.addSender(name: "fast", channels: 1, sampleRate: 48000, format: .int16)
            let receiver = try client.addReceiver(name: "slow", channels: 1, sampleRate: 16000, format: .int16)
            try client.connect(from: sender.name, to: receiver.name)
            let seconds = 60.0

            let push = PacedClient()
            let block = [Int16](repeating: 1000, count: 480)
            let pushThread = push.run(every: Int64(10_000_000 / 1.005)) {
                block.withUnsafeBufferPointer { sender.send(int16: $0.baseAddress!, frames: 480) }
                return sender.fill
            }
            let pull = PacedClient()
            let out = UnsafeMutablePointer<Int16>.allocate(capacity: 160)
            nonisolated(unsafe) let outBuffer = out
            let pullThread = pull.run(every: Int64(10_000_000 * 1.005)) {
                _ = receiver.receive(int16: outBuffer, frames: 160)
                return receiver.fill
            }
            Thread.sleep(forTimeInterval: seconds)
            push.finish()
            pull.finish()
            _ = (pushThread, pullThread)

            let lateSender = push.fills.suffix(30), lateReceiver = pull.fills.suffix(30)
            let figures = """
                drift test, \(Int(seconds)) s: sender 48 kHz +0.5 %: fill max \(lateSender.max() ?? -1) (last 30 s), \
                ratio \(fixed(sender.ratio, digits: 5)), underruns \(sender.underruns), overruns \(sender.overruns); \
                receiver 16 kHz -0.5 %: fill max \(lateReceiver.max() ?? -1), ratio \(fixed(receiver.ratio, digits: 5)), \
                underruns \(receiver.underruns), overruns \(receiver.overruns)
                """
            print(figures)
            // Without correction the fast sender would gain 240 frames a second (14 400 in a minute).
            #expect((lateSender.max() ?? .max) < 4000, "\(figures)")
            #expect((lateReceiver.max() ?? .max) < 4000, "\(figures)")
            #expect(sender.overruns == 0 && receiver.overruns == 0, "\(figures)")
            #expect(sender.underruns + receiver.underruns < 60, "glitches are rare: \(figures)")
            #expect(sender.ratio < 1 && receiver.ratio < 1 / 3.0, "the ratios lean against the drift: \(figures)")
        }
    }
}
