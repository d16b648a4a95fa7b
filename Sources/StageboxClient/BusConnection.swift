import CLinux
import StageboxProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageboxRealtime

/// Why talking to the bus failed.
public enum BusClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No stagebox is listening at the socket path.
    case notRunning(path: String, code: Int32)
    /// The server refused the request.
    case refused(BusErrorCode, String)
    /// The connection broke or the server sent something unexpected.
    case connection(String)
    case timeout

    public var description: String {
        switch self {
        case let .notRunning(path, code):
            return "no stagebox is running at \(path) (\(String(cString: strerror(code))))"
        case let .refused(_, message): return message
        case .connection(let why): return "connection to stagebox lost: \(why)"
        case .timeout: return "stagebox did not answer in time"
        }
    }
}

/// A connection to a running stagebox's bus: requests and their answers, and the events the
/// server pushes. A reader thread takes everything the server sends; requests wait for their
/// own answer.
public final class BusConnection: @unchecked Sendable {
    public let socketPath: String
    public let clientName: String
    /// The bus's sample rate and period, from the server's welcome.
    public private(set) var sampleRate = 0
    public private(set) var period = 0
    public private(set) var serverVersion = ""
    private let fd: Int32
    private var reader: PosixThread?
    private let nextID = Atomic<UInt32>(1)
    private let sendLock = Mutex<Void>(())
    private let state = Mutex<State>(State())
    private let answered = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    private struct State {
        var answers: [UInt32: (ServerMessage, [Int32])] = [:]
        var eventHandlers: [@Sendable (BusEvent) -> Void] = []
        var failure: String?
    }

    /// Connects and says hello as `name`.
    public init(socketPath: String, name: String, timeoutSeconds: Double = 5) throws(BusClientError) {
        self.socketPath = socketPath
        self.clientName = name
        fd = stagebox_unix_stream_socket(0)
        guard fd >= 0 else { throw .connection("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .connection("socket path too long: \(socketPath)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes); $0[bytes.count] = 0 }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { let e = errno; close(fd); throw .notRunning(path: socketPath, code: e) }
        startReader()
        let answer: ServerMessage
        do throws(BusClientError) {
            (answer, _) = try request(.hello(clientName: name, version: busProtocolVersion), timeoutSeconds: timeoutSeconds)
        } catch {
            // A failed init does not run deinit: stop the reader and close the socket here.
            disconnect()
            close(fd)
            throw error
        }
        guard case let .welcome(version, rate, period, _) = answer else {
            disconnect()
            close(fd)
            throw .connection("unexpected answer to hello: \(answer)")
        }
        serverVersion = version
        sampleRate = rate
        self.period = period
    }

    deinit {
        disconnect()
        close(fd)
    }

    /// Closes the connection: the server removes this client's ports.
    public func disconnect() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        if let r = reader {
            // An event handler may drop the last reference to its client, and so call this on
            // the reader thread itself: that thread then ends on its own after the handler.
            r.joinOrDetach()
        }
        for (_, fds) in state.withLock({ $0.answers.values }) { fds.forEach { close($0) } }
    }

    /// Calls `handler` on the reader thread for every event the server pushes.
    public func onEvent(_ handler: @escaping @Sendable (BusEvent) -> Void) {
        state.withLock { $0.eventHandlers.append(handler) }
    }

    /// Sends a request and waits for its answer (and the descriptors that came with it).
    /// An `.error` answer throws `.refused`.
    public func request(_ message: ClientMessage, timeoutSeconds: Double = 5) throws(BusClientError) -> (ServerMessage, [Int32]) {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let bytes = message.encoded(requestID: id)
        let sent = sendLock.withLock { _ in
            bytes.withUnsafeBytes { stagebox_send_with_fds(fd, $0.baseAddress, $0.count, nil, 0) }
        }
        guard sent == bytes.count else { throw .connection("send: \(String(cString: strerror(errno)))") }
        let deadline = monotonicSeconds() + timeoutSeconds
        while true {
            let (answer, failure) = state.withLock { s in (s.answers.removeValue(forKey: id), s.failure) }
            if let (message, fds) = answer {
                if case let .error(code, text) = message { fds.forEach { close($0) }; throw .refused(code, text) }
                return (message, fds)
            }
            if let failure { throw .connection(failure) }
            if monotonicSeconds() > deadline { throw .timeout }
            usleep(200)
        }
    }

    /// The reader thread keeps the connection alive while it runs, so a handler that releases
    /// the last outside reference cannot pull the object from under it.
    private func startReader() {
        reader = try? PosixThread.start { self.readLoop() }.get()
    }

    private func readLoop() {
        var inbound: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var pendingFDs: [Int32] = []
        while !closed.load(ordering: .relaxed) {
            var fds = [Int32](repeating: -1, count: 8)
            var count: Int32 = 0
            let n = buffer.withUnsafeMutableBytes { raw in
                fds.withUnsafeMutableBufferPointer { stagebox_recv_with_fds(fd, raw.baseAddress, raw.count, $0.baseAddress, 8, &count) }
            }
            if n <= 0 {
                let why = n == 0 ? "the server closed the connection" : String(cString: strerror(errno))
                state.withLock { $0.failure = $0.failure ?? why }
                return
            }
            pendingFDs += fds.prefix(Int(count))
            inbound += buffer[0..<n]
            do throws(ProtocolError) {
                while let frame = try Frame.next(from: &inbound) {
                    let message = try ServerMessage.decode(type: frame.type, body: frame.body)
                    if frame.requestID == 0, case .event(let event) = message {
                        for handler in state.withLock({ $0.eventHandlers }) { handler(event) }
                        continue
                    }
                    if frame.requestID == 0, case let .error(_, text) = message {
                        state.withLock { $0.failure = text }
                        continue
                    }
                    // Descriptors travel with the portCreated answer, the only one that has them.
                    var attached: [Int32] = []
                    if case .portCreated = message { attached = pendingFDs; pendingFDs = [] }
                    state.withLock { $0.answers[frame.requestID] = (message, attached) }
                }
            } catch {
                state.withLock { $0.failure = "bad message from the server: \(error)" }
                return
            }
        }
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
