import Foundation
import StageboxClient
import Synchronization
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The probe's bus clients, in this process: three senders (one at 44.1 kHz, one of 16-bit
/// samples), two receivers (one at 16 kHz), a filter and a separate-streams receiver, moved
/// by one thread every 5 ms as a program on its own clock would.
final class ProbeClients: @unchecked Sendable {
    // @unchecked: the ports are used by the pump thread only once it runs; `stop` is atomic.
    let client: BusClient
    private let senders: [SenderPort]
    private let receivers: [ReceiverPort]
    private let separate: ReceiverPort
    private let filter: FilterPort
    private let stopFlag = Atomic<Bool>(false)
    private var thread: Thread?

    init(socket: String) throws {
        client = try BusClient(name: "probe", socketPath: socket)
        senders = [try client.addSender(name: "s1", channels: 2),
                   try client.addSender(name: "s2", channels: 2, sampleRate: 44100),
                   try client.addSender(name: "s3", channels: 1, format: .int16)]
        receivers = [try client.addReceiver(name: "r1", channels: 2),
                     try client.addReceiver(name: "r2", channels: 1, sampleRate: 16000)]
        separate = try client.addReceiver(name: "sep", channels: 2, separateStreams: true)
        filter = try client.addFilter(name: "fx", channels: 2) { samples, frames, _ in
            for i in 0..<(frames * 2) { samples[i] *= 0.5 }
        }
        try client.connect(from: "probe.s1", to: "codec.out")
        try client.connect(from: "codec.in", to: "probe.fx")
        try client.connect(from: "probe.fx", to: "probe.r1")
        try client.connect(from: "probe.s2", to: "probe.r1")
        try client.connect(from: "probe.s3", to: "probe.r2")
        try client.connect(from: "probe.s1", to: "probe.sep")
        try client.connect(from: "tone", to: "probe.sep")
    }

    /// Ports this client has on the bus.
    var portCount: Int { senders.count + receivers.count + 2 }

    func start() {
        let t = Thread { [self] in
            let block = 240 // 5 ms at 48 kHz
            var samples = [Float](repeating: 0.1, count: 4 * block)
            var deadline = monotonicNanoseconds()
            while !stopFlag.load(ordering: .relaxed) {
                deadline += 5_000_000
                sleepUntil(monotonicNanos: deadline)
                samples.withUnsafeMutableBufferPointer { p in
                    senders[0].send(p.baseAddress!, frames: block)
                    senders[1].send(p.baseAddress!, frames: 220)
                    senders[2].send(p.baseAddress!, frames: block)
                    _ = receivers[0].receive(into: p.baseAddress!, frames: block)
                    _ = receivers[1].receive(into: p.baseAddress!, frames: 80)
                }
                while separate.receiveInterval({ _, _, _ in }) {}
            }
        }
        thread = t
        t.start()
    }

    func stop() {
        stopFlag.store(true, ordering: .relaxed)
        usleep(20_000)
        filter.stop()
        client.close()
    }
}

/// `stagebox-allocation-probe --client SOCKET`: a client in a process of its own, sending into
/// `codec.out` until it is killed.
func runChildClient(socket: String) -> Never {
    do {
        let client = try BusClient(name: "victim", socketPath: socket)
        let sender = try client.addSender(name: "out", channels: 2)
        try client.connect(from: sender.name, to: "codec.out")
        let ready = Array("ready\n".utf8)
        _ = ready.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        var samples = [Float](repeating: 0.2, count: 2 * 480)
        while true {
            samples.withUnsafeMutableBufferPointer { sender.send($0.baseAddress!, frames: 480) }
            usleep(10_000)
        }
    } catch {
        print("victim: \(error)")
        exit(1)
    }
}
