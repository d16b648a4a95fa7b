import StageboxProtocol
import StageboxSystem
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why talking to the bus failed.
public enum BusClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No stagebox is listening at the socket path.
    case notRunning(path: String, errno: Errno)
    /// The server refused the request.
    case refused(BusErrorCode, String)
    /// The connection broke or the server sent something unexpected.
    case connection(String)
    case timeout

    public var description: String {
        switch self {
        case let .notRunning(path, errno):
            return "no stagebox is running at \(path) (\(errno))"
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
    // @unchecked: the welcome's figures and `reader` are set in init and only read after; the
    // answers and handlers are behind a Mutex, the flags atomic, and sends hold `sendLock`.
    public let socketPath: String
    public let clientName: String
    /// The bus's sample rate and period, from the server's welcome.
    public private(set) var sampleRate = 0
    public private(set) var period = 0
    public private(set) var serverVersion = ""
    private let fd: FileDescriptor
    private var reader: PosixThread?
    private let nextID = Atomic<UInt32>(1)
    private let sendLock = Mutex<Void>(())
    private let state = Mutex<State>(State())
    private let answered = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    private struct State {
        var answers: [UInt32: (ServerMessage, [OwnedDescriptor])] = [:]
        var eventHandlers: [@Sendable (BusEvent) -> Void] = []
        var failure: String?
    }

    /// Connects and says hello as `name`.
    public init(socketPath: String, name: String, timeoutSeconds: Double = 5) throws(BusClientError) {
        self.socketPath = socketPath
        self.clientName = name
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: socketPath) } catch { throw .connection("\(error)") }
        do { fd = try UnixSocket.stream(nonBlocking: false) } catch {
            throw .connection("cannot make a socket to reach \(socketPath): \(error)")
        }
        // From here every stored property is set, so a throw runs deinit, which closes the socket
        // once nothing holds the connection. Closing it here as well closed its number twice: by
        // then another thread may have been given that number for a file of its own.
        do { try address.connect(fd) } catch {
            throw .notRunning(path: socketPath, errno: error)
        }
        // The reader thread holds the connection too: a way out after it started must stop it
        // (`disconnect`), or deinit would not run, and the socket and the thread would stay
        // until the server hung up.
        let answer: ServerMessage
        do throws(BusClientError) {
            try startReader()
            (answer, _) = try request(.hello(clientName: name, version: busProtocolVersion), timeoutSeconds: timeoutSeconds)
        } catch {
            disconnect()
            throw error
        }
        guard case let .welcome(version, rate, period, _) = answer else {
            disconnect()
            throw .connection("unexpected answer to hello: \(answer)")
        }
        serverVersion = version
        sampleRate = rate
        self.period = period
    }

    deinit {
        disconnect()
        try? fd.close()
    }

    /// Closes the connection: the server removes this client's ports.
    public func disconnect() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        shutdown(fd.rawValue, Int32(SHUT_RDWR))
        if let r = reader {
            // An event handler may drop the last reference to its client, and so call this on
            // the reader thread itself: that thread then ends on its own after the handler.
            r.joinOrDetach()
        }
        // Descriptors of answers nobody took close with them.
        state.withLock { $0.answers = [:] }
    }

    /// Why the connection is lost (the server closed it, or sent something unreadable); nil
    /// while it works.
    public var lostReason: String? { state.withLock { $0.failure } }

    /// Calls `handler` on the reader thread for every event the server pushes.
    public func onEvent(_ handler: @escaping @Sendable (BusEvent) -> Void) {
        state.withLock { $0.eventHandlers.append(handler) }
    }

    /// Sends a request and waits for its answer (and the descriptors that came with it, closed
    /// when the caller lets go of them unless taken). An `.error` answer throws `.refused`.
    public func request(_ message: ClientMessage, timeoutSeconds: Double = 5) throws(BusClientError) -> (ServerMessage, [OwnedDescriptor]) {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let bytes = message.encoded(requestID: id)
        let sent = sendLock.withLock { _ in
            bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try DescriptorPassing.send(fd, raw) } }
        }
        switch sent {
        case .success(let n) where n == bytes.count: break
        case .success(let n): throw .connection("sending a request to \(socketPath): sent \(n) of \(bytes.count) bytes")
        case .failure(let error): throw .connection("sending a request to \(socketPath): \(error)")
        }
        let deadline = monotonicSeconds() + timeoutSeconds
        while true {
            let (answer, failure) = state.withLock { s in (s.answers.removeValue(forKey: id), s.failure) }
            if let (message, fds) = answer {
                if case let .error(code, text) = message { throw .refused(code, text) }
                return (message, fds)
            }
            if let failure { throw .connection(failure) }
            if monotonicSeconds() > deadline { throw .timeout }
            usleep(200)
        }
    }

    /// The reader thread keeps the connection alive while it runs, so a handler that releases
    /// the last outside reference cannot pull the object from under it.
    private func startReader() throws(BusClientError) {
        do throws(SystemCallError) {
            reader = try PosixThread.start(named: "the bus connection's reader") { self.readLoop() }.get()
        } catch {
            throw .connection("\(error)")
        }
    }

    private func readLoop() {
        var inbound: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var pendingFDs: [OwnedDescriptor] = []
        while !closed.load(ordering: .relaxed) {
            let received = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try DescriptorPassing.receive(fd, into: raw) }
            }
            let n: Int
            switch received {
            case .success(let r) where r.count > 0:
                n = r.count
                pendingFDs += r.descriptors
            case .success:
                state.withLock { $0.failure = $0.failure ?? "the server closed the connection" }
                return
            case .failure(let error):
                state.withLock { $0.failure = $0.failure ?? "reading from \(self.socketPath): \(error)" }
                return
            }
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
                    var attached: [OwnedDescriptor] = []
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
