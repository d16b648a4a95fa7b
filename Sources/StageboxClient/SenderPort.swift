import StageboxProtocol

/// A sender port: the program puts audio on the bus (Audiobus's `ABAudioSenderPort`).
///
/// `send` never blocks: when the bus has not taken earlier audio yet and the ring is full, the
/// oldest frames are dropped (an overrun). A program that is not paced by a clock of its own can
/// pace itself on the bus with `waitForSpace`.
public final class SenderPort: @unchecked Sendable {
    public let name: String
    public let channels: Int
    /// The program's sample rate; the bus converts.
    public let sampleRate: Int
    let ring: SharedRing
    let wake: EventFD
    private let adapter: RateAdapter
    private let state: PortState?
    private weak var client: BusClient?
    private var converted: [Float]
    private var integers: [Float]

    init(client: BusClient, info: PortInfo, fds: [Int32], sampleRate: Int) throws(BusClientError) {
        (ring, wake) = try mapRingAndWake(fds, port: "sender")
        name = info.name
        channels = info.channels
        self.sampleRate = sampleRate
        self.client = client
        state = client.state(of: info.name)
        let busRate = client.sampleRate
        adapter = RateAdapter(channels: channels, nominalRatio: Double(busRate) / Double(sampleRate),
                              band: RateAdapter.band(period: client.period, busRate: busRate))
        converted = [Float](repeating: 0, count: 8192 * channels)
        integers = [Float](repeating: 0, count: 8192 * channels)
    }

    deinit { client?.removePort(name) }

    /// Whether anything on the bus takes this port's audio. Safe on a real-time thread.
    public var isConnected: Bool { state?.connected.load(ordering: .relaxed) ?? false }
    /// Whether the port is muted on the bus. Safe on a real-time thread.
    public var isMuted: Bool { state?.muted.load(ordering: .relaxed) ?? false }

    /// Frames waiting in the ring for the bus to take (bus rate).
    public var fill: Int { ring.available }
    /// Periods the bus found the ring empty.
    public var underruns: Int { ring.underruns }
    /// Times frames were dropped because the ring was full.
    public var overruns: Int { ring.overruns }
    /// The conversion ratio in use (bus frames per program frame).
    public var ratio: Double { adapter.ratio }

    /// Puts `frames` interleaved Float32 frames on the bus.
    ///
    /// The bus starts taking the port's audio once two of the program's blocks are waiting
    /// (and again after an underrun): a cushion against the program's own timing jitter.
    public func send(_ samples: UnsafePointer<Float>, frames: Int) {
        let cushion = Int(Double(2 * frames) * adapter.nominalRatio)
        if cushion > ring.startThreshold { ring.startThreshold = cushion }
        var offset = 0
        while offset < frames {
            let room = converted.count / channels
            // As many input frames as the conversion can turn into at most `room` output frames.
            let chunk = min(frames - offset, max(1, Int(Double(room - 16) / (adapter.nominalRatio * 1.03))))
            let n = converted.withUnsafeMutableBufferPointer {
                adapter.convert(samples + offset * channels, frames: chunk, into: $0.baseAddress!, capacity: room)
            }
            converted.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: n) }
            offset += chunk
        }
        adapter.observe(fill: ring.available)
        ring.ratio = adapter.ratio
    }

    /// Puts `frames` interleaved 16-bit frames on the bus.
    public func send(int16 samples: UnsafePointer<Int16>, frames: Int) {
        var offset = 0
        while offset < frames {
            let chunk = min(frames - offset, integers.count / channels)
            for i in 0..<(chunk * channels) { integers[i] = Float(samples[offset * channels + i]) * (1 / 32768) }
            integers.withUnsafeBufferPointer { send($0.baseAddress!, frames: chunk) }
            offset += chunk
        }
    }

    /// Waits until the ring has room for `frames` program frames, or `timeoutSeconds` pass.
    public func waitForSpace(frames: Int, timeoutSeconds: Double) -> Bool {
        let need = Int((Double(frames) * adapter.nominalRatio).rounded(.up))
        let deadline = monotonicSeconds() + timeoutSeconds
        while ring.capacity - ring.available < need {
            let left = deadline - monotonicSeconds()
            if left <= 0 { return false }
            _ = wake.wait(timeoutNanos: Int64(min(left, 0.05) * 1e9))
        }
        return true
    }

    /// Waits until the bus has taken everything sent so far (or the timeout passes).
    public func drain(timeoutSeconds: Double) -> Bool {
        let deadline = monotonicSeconds() + timeoutSeconds
        while ring.available > 0 {
            if monotonicSeconds() > deadline { return false }
            _ = wake.wait(timeoutNanos: 20_000_000)
        }
        return true
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

func closeDescriptor(_ fd: Int32) { close(fd) }

/// Maps the ring and adopts the wakeup that came with a sender's or receiver's creation.
func mapRingAndWake(_ fds: [Int32], port: String) throws(BusClientError) -> (SharedRing, EventFD) {
    guard fds.count == 2 else {
        fds.forEach { closeDescriptor($0) }
        throw .connection("\(port) port came with \(fds.count) descriptors, not 2")
    }
    do {
        return (try SharedRing.map(fileDescriptor: fds[0]), EventFD(adopting: fds[1]))
    } catch {
        closeDescriptor(fds[1])
        throw .connection("cannot map the port's shared memory: \(error)")
    }
}
