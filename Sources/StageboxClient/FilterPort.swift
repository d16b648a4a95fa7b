import StageboxProtocol
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A filter port: the bus hands the program each period, the program processes it in place and
/// hands it back within the deadline (Audiobus's `ABAudioFilterPort`). The processing runs on
/// the port's own thread; a program that misses the deadline is bypassed, never waited for.
public final class FilterPort: @unchecked Sendable {
    // @unchecked: `thread` is set in init and joined by stop; the processing state is the port
    // thread's own; `running` is atomic and the rest immutable.
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

    /// On any failure the descriptors close with `fds`.
    init(client: BusClient, info: PortInfo, fds: [OwnedDescriptor], process: @escaping Process) throws(BusClientError) {
        guard fds.count == 4 else { throw .connection("filter port came with \(fds.count) descriptors, not 4") }
        do throws(RingError) {
            fromBus = try SharedRing.map(fds[0])
            toBus = try SharedRing.map(fds[1])
        } catch {
            throw .connection("cannot map the port's shared memory: \(error)")
        }
        wakeMe = try adoptWakeup(fds[2])
        wakeBus = try adoptWakeup(fds[3])
        name = info.name
        channels = info.channels
        period = client.period
        self.process = process
        self.client = client
        do throws(SystemCallError) {
            // Unowned: the port joins the thread before it goes away.
            thread = try PosixThread.start(named: "the filter port \(info.name)") { [unowned self] in self.loop() }.get()
        } catch {
            // Nothing would process: the port leaves the bus again (deinit removes it).
            running.store(false, ordering: .relaxed)
            throw .connection("\(error)")
        }
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
