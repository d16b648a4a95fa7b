import StageboxProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageboxRealtime

/// A filter port: the bus hands the program each period, the program processes it in place and
/// hands it back within the deadline (Audiobus's `ABAudioFilterPort`). The processing runs on
/// the port's own thread; a program that misses the deadline is bypassed, never waited for.
public final class FilterPort: @unchecked Sendable {
    public typealias Process = @Sendable (_ samples: UnsafeMutablePointer<Float>, _ frames: Int, _ timestamp: FrameTimestamp) -> Void

    public let name: String
    public let channels: Int
    private let fromBus: SharedRing
    private let toBus: SharedRing
    private let wakeMe: Wakeup
    private let wakeBus: Wakeup
    private let process: Process
    private let period: Int
    private let running = Atomic<Bool>(true)
    private var thread: PosixThread?
    private weak var client: BusClient?

    init(client: BusClient, info: PortInfo, fds: [Int32], process: @escaping Process) throws(BusClientError) {
        guard fds.count == 4 else { fds.forEach { closeDescriptor($0) }; throw .connection("filter port came with \(fds.count) descriptors, not 4") }
        do {
            fromBus = try SharedRing.map(fileDescriptor: fds[0])
            toBus = try SharedRing.map(fileDescriptor: fds[1])
        } catch {
            fds.forEach { closeDescriptor($0) }
            throw .connection("cannot map the port's shared memory: \(error)")
        }
        wakeMe = Wakeup(adopting: fds[2])
        wakeBus = Wakeup(adopting: fds[3])
        name = info.name
        channels = info.channels
        period = client.period
        self.process = process
        self.client = client
        start()
    }

    deinit {
        stop()
        client?.removePort(name)
    }

    /// Stops processing: the bus bypasses the port from then on.
    public func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        wakeMe.signal()
        thread?.join()
    }

    private func start() {
        // Unowned: the port joins the thread before it goes away.
        thread = try? PosixThread.start { [unowned self] in self.loop() }.get()
    }

    private func loop() {
        let block = UnsafeMutablePointer<Float>.allocate(capacity: period * channels)
        defer { block.deallocate() }
        while running.load(ordering: .relaxed) {
            _ = wakeMe.wait(timeoutNanos: 100_000_000)
            while running.load(ordering: .relaxed) {
                let position = fromBus.readPositionNow
                guard fromBus.read(into: block, frames: period) else { break }
                let t = fromBus.timestamp(atOrBefore: position)
                process(block, period, FrameTimestamp(codecFrame: t?.codecFrame ?? 0, hostNanos: t?.hostNanos ?? 0))
                toBus.write(block, frames: period)
                wakeBus.signal()
            }
        }
    }
}
