import CLinux
import Logging
import StageboxEngine
import StageboxProtocol
import StageboxSystem
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageboxTriggers

/// Why the bus server could not start: names the socket path, what was being done, and the
/// system's reason in words when there is one.
public struct BusServerError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var what: String
    public var errno: Errno?

    public init(path: String, what: String, errno: Errno? = nil) {
        self.path = path
        self.what = what
        self.errno = errno
    }

    public var description: String {
        "bus socket \(path): \(what)" + (errno.map { ": \($0)" } ?? "")
    }
}

/// The server side of the client bus: a Unix socket where programs on the board connect, get
/// ports on the engine, and exchange audio through shared memory.
///
/// One thread serves every client with poll(); the audio thread never waits for it. What a
/// client sends is checked before anything is done with it: a bad message gets an error
/// answer, a broken stream a disconnect, and neither stops the audio.
public final class BusServer: @unchecked Sendable {
    // @unchecked: `listener` changes only in start and stop, before the server thread starts
    // and after it is joined; `sessions`, `polledSessions`, `receiveBuffer` and
    // `nextSessionSerial` belong to the server thread; what other threads touch is behind a
    // Mutex or atomic.
    public let settings: BusServerSettings
    let engine: Engine
    let triggers: TriggerBoard
    let logger: Logger
    let serverVersion: String
    /// Frames per period, as clients are told it: the engine's, the one authority.
    var period: Int { engine.settings.period }
    private var listener: FileDescriptor?
    private let loop: ServiceLoop
    private let stopping = Atomic<Bool>(false)
    /// The server thread's own: the sessions its last wait polled, and the receive buffer.
    private var polledSessions: [ClientSession] = []
    private var receiveBuffer = [UInt8](repeating: 0, count: 65536)
    /// Events raised on other threads, sent by the server thread: to every client, or (with a
    /// session's serial) to that one client.
    private let pendingEvents = Mutex<[(event: BusEvent, session: UInt64?)]>([])
    private var nextSessionSerial: UInt64 = 0
    /// A copy of the client table for other threads (the console, `stagebox clients`).
    private let published = Mutex<[ClientReport]>([])
    private let connectionCount = Atomic<Int>(0)
    private var sessions: [ClientSession] = []
    /// Clients disconnected because their shared memory was found corrupt.
    public let ringFaults = Atomic<Int>(0)
    /// Tells every client that the codec's lifecycle moved.
    public func announceLifecycle(state: String, reason: String) {
        post(.lifecycleChanged(state: state, reason: reason))
    }

    /// When a client last asked for a port (monotonic nanoseconds): where a resume's time starts.
    public let portRequestedAt = Atomic<Int64>(0)
    /// Runs console lines for `stagebox console` over the socket (set once the console exists).
    public let consoleHandler = Mutex<ConsoleHandler?>(nil)

    /// What the bus needs of the console.
    public struct ConsoleHandler: Sendable {
        public var execute: @Sendable (String) -> (text: String, failed: Bool)
        public var complete: @Sendable (String) -> [String]
        public init(execute: @escaping @Sendable (String) -> (text: String, failed: Bool), complete: @escaping @Sendable (String) -> [String]) {
            self.execute = execute
            self.complete = complete
        }
    }

    public init(settings: BusServerSettings, engine: Engine, triggers: TriggerBoard, logger: Logger,
                serverVersion: String) throws(BusServerError) {
        self.settings = settings
        self.engine = engine
        self.triggers = triggers
        self.logger = logger
        self.serverVersion = serverVersion
        do { loop = try ServiceLoop(named: "the bus server") } catch {
            throw BusServerError(path: settings.socketPath, what: "\(error)")
        }
    }

    /// A client with its ports, for reports.
    public struct ClientReport: Sendable {
        public var name: String
        public var pid: Int32
        public var ports: [ClientPortRecord]
    }

    public var clients: [ClientReport] { published.withLock { $0 } }
    /// Open connections, whether or not they said hello: what the client limit counts. A client
    /// whose hello was refused is one until the server has seen it close.
    public var connections: Int { connectionCount.load(ordering: .relaxed) }

    // MARK: Starting and stopping

    /// Binds the socket (mode 0660, group `audio` when it exists) and starts serving.
    public func start() throws(BusServerError) {
        let path = settings.socketPath
        try Self.prepareDirectory(of: path)
        try Self.removeStaleSocket(at: path)
        let address = try Self.address(path)
        let fd: FileDescriptor
        do { fd = try UnixSocket.stream(nonBlocking: true) } catch {
            throw BusServerError(path: path, what: "making a socket", errno: error)
        }
        let audioGroup = Self.groupID(named: "audio")
        // Bound and listening under another name, then renamed: the path shows only once a
        // client that sees it can connect (between bind and listen a connect is refused, which a
        // script that waits for the path met on a loaded machine). A path too long for the
        // other name is bound as it is.
        let staging = path + ".new"
        let stagingAddress = try? Self.address(staging)
        do throws(Errno) {
            let bound = stagingAddress != nil ? staging : path
            if let stagingAddress {
                unlink(staging) // left by a server that died between bind and rename
                try stagingAddress.bind(fd)
            } else {
                try address.bind(fd)
            }
            guard listen(fd.rawValue, 16) == 0 else { throw Errno.last }
            chmod(bound, 0o660)
            if let gid = audioGroup { chown(bound, uid_t.max, gid) }
            if bound != path, rename(bound, path) != 0 {
                let error = Errno.last
                unlink(bound)
                throw error
            }
        } catch {
            try? fd.close()
            throw BusServerError(path: path, what: "binding and listening", errno: error)
        }
        listener = fd
        triggers.onChange { [weak self] name, state in
            self?.post(.triggerChanged(name: name, state: state.rawValue))
        }
        triggers.onRemove { [weak self] name in self?.post(.triggerRemoved(name)) }
        // Every change is announced from the engine's own change path, whoever made it.
        engine.onChange { [weak self] change in self?.post(BusEvent(change)) }
        do throws(SystemCallError) {
            try loop.start({ [self] turn in serve(turn, listener: fd) }, finish: { [self] in
                broadcast(.serverStopping)
                for session in sessions { end(session, reason: "server stopping") }
            })
        } catch {
            // Nobody would serve the socket: take it away again.
            listener = nil
            try? fd.close()
            unlink(path)
            throw BusServerError(path: path, what: "\(error)")
        }
        logger.info("bus: listening on \(path)")
    }

    /// Tells every client the server is stopping, disconnects them and removes the socket.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        loop.stop()
        guard let listener else { return } // never started: the path may be another server's
        try? listener.close()
        self.listener = nil
        unlink(settings.socketPath)
    }

    /// Queues an event raised outside the server thread for every client.
    public func post(_ event: BusEvent) {
        pendingEvents.withLock { $0.append((event, nil)) }
        loop.wake()
    }

    /// Queues an event for one client only (its trigger was fired); dropped if it has left.
    func post(_ event: BusEvent, toSession serial: UInt64) {
        pendingEvents.withLock { $0.append((event, serial)) }
        loop.wake()
    }

    /// The group's id from /etc/group. Read directly rather than through getgrnam: in a
    /// statically linked glibc binary getgrnam needs the NSS shared libraries, which the
    /// appliance's image does not carry.
    static func groupID(named name: String, groupFile: String = "/etc/group") -> gid_t? {
        guard let file = fopen(groupFile, "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), file) != nil {
            let fields = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.split(separator: ":", omittingEmptySubsequences: false)
            if fields.count >= 3, fields[0] == name, let gid = gid_t(fields[2]) { return gid }
        }
        return nil
    }

    private static func prepareDirectory(of path: String) throws(BusServerError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let dir = String(path[..<slash])
        if access(dir, F_OK) != 0 && mkdir(dir, 0o755) != 0 && errno != EEXIST {
            throw BusServerError(path: path, what: "creating its directory \(dir)", errno: .last)
        }
    }

    /// A socket file left by a stagebox that died is removed; one that answers is another
    /// stagebox running, and we refuse to take its place.
    private static func removeStaleSocket(at path: String) throws(BusServerError) {
        guard access(path, F_OK) == 0 else { return }
        let address = try address(path)
        let probe: FileDescriptor
        do { probe = try UnixSocket.stream(nonBlocking: false) } catch {
            throw BusServerError(path: path, what: "making a socket to probe it", errno: error)
        }
        defer { try? probe.close() }
        if (try? address.connect(probe)) != nil {
            throw BusServerError(path: path, what: "another stagebox is already serving it")
        }
        unlink(path)
    }

    static func address(_ path: String) throws(BusServerError) -> UnixSocketAddress {
        do { return try UnixSocketAddress(path: path) } catch {
            throw BusServerError(path: path, what: "\(error)")
        }
    }

    // MARK: The server thread

    /// One turn of the server thread: events raised elsewhere go out, clients' requests are
    /// answered, a new client is accepted, clients the audio thread found faulty are let go.
    private func serve(_ turn: ServiceLoop.Turn, listener: FileDescriptor) -> ServiceLoop.Next {
        disconnectFaultedClients()
        nameSeparateSources(sessions)
        if turn.woken {
            for pending in pendingEvents.withLock({ let e = $0; $0 = []; return e }) {
                if let serial = pending.session {
                    send(pending.event, toSession: serial)
                } else {
                    broadcast(pending.event)
                }
            }
        }
        // The sessions polled, not the current list: accepting adds, handling one may end another.
        for session in polledSessions where turn.revents(of: session.socket.rawValue) != 0 {
            if sessions.contains(where: { $0 === session }) { receive(session, into: &receiveBuffer) }
        }
        if turn.revents(of: listener.rawValue) & Int16(POLLIN) != 0 { accept(listener) }
        polledSessions = sessions
        // With clients, a tenth of a second to notice one the audio thread found faulty.
        let deadline = sessions.isEmpty ? nil : monotonicNanoseconds() + 100_000_000
        return .reading([listener.rawValue] + sessions.map(\.socket.rawValue), deadline: deadline)
    }

    private func accept(_ listener: FileDescriptor) {
        let fd = stagebox_accept(listener.rawValue)
        guard fd >= 0 else { return }
        nextSessionSerial += 1
        let session = ClientSession(socket: FileDescriptor(rawValue: fd), serial: nextSessionSerial)
        if sessions.count >= settings.maxClients {
            _ = session.send(ServerMessage.error(.limit, "the bus has its maximum of \(settings.maxClients) clients")
                .encoded(requestID: 0))
            logger.warning("bus: refused \(session.label): \(settings.maxClients) clients already")
            return
        }
        sessions.append(session)
        connectionCount.store(sessions.count, ordering: .relaxed)
        logger.info("bus: connection from pid \(session.pid) uid \(session.uid) gid \(session.gid)")
    }

    private func receive(_ session: ClientSession, into buffer: inout [UInt8]) {
        // Clients have no reason to send descriptors: any that came are closed with `received`.
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) in try DescriptorPassing.receive(session.socket, into: raw) }
        }
        let n: Int
        switch result {
        case .success(let received): n = received.count
        case .failure(.wouldBlock): return
        case .failure(let error): return end(session, reason: "socket error: \(error)")
        }
        if n == 0 { return end(session, reason: "disconnected") }
        session.inbound += buffer[0..<n]
        do throws(ProtocolError) {
            while let frame = try Frame.next(from: &session.inbound) {
                let message: ClientMessage
                do throws(ProtocolError) {
                    message = try ClientMessage.decode(type: frame.type, body: frame.body)
                } catch {
                    logger.warning("bus: \(session.label): bad message: \(error)")
                    reply(session, frame.requestID, .error(.badRequest, error.description))
                    continue
                }
                handle(message, id: frame.requestID, from: session)
                if !sessions.contains(where: { $0 === session }) { return }
            }
        } catch {
            // The byte stream itself is broken: there is no telling where the next message starts.
            _ = session.send(ServerMessage.error(.badRequest, error.description).encoded(requestID: 0))
            end(session, reason: "broken stream: \(error)")
        }
    }

    func reply(_ session: ClientSession, _ id: UInt32, _ message: ServerMessage, fds: [FileDescriptor] = []) {
        if let failure = session.send(message.encoded(requestID: id), fds: fds) { end(session, reason: failure) }
    }

    func broadcast(_ event: BusEvent) {
        if event == .connectionsChanged { nameSeparateSources(sessions) }
        let bytes = ServerMessage.event(event).encoded(requestID: 0)
        for session in sessions where session.name != nil {
            if let failure = session.send(bytes) { end(session, reason: failure) }
        }
    }

    /// Sends an event to the one session with this serial, if it is still here.
    private func send(_ event: BusEvent, toSession serial: UInt64) {
        guard let session = sessions.first(where: { $0.serial == serial }) else { return }
        if let failure = session.send(ServerMessage.event(event).encoded(requestID: 0)) { end(session, reason: failure) }
    }

    /// Ends a session: its ports leave the bus (their connections fade out), its memory and
    /// descriptors are released once the audio thread has let go of them; its triggers leave
    /// the trigger board (buttons mapped to them do nothing until they come back).
    func end(_ session: ClientSession, reason: String) {
        guard let index = sessions.firstIndex(where: { $0 === session }) else { return }
        sessions.remove(at: index)
        let shortfalls = Self.shortfalls(session.ports.values)
        for name in session.ports.keys.sorted() { try? engine.removePort(name) }
        session.ports = [:]
        for name in session.triggers.sorted() { triggers.remove(name) }
        session.triggers = []
        publish()
        logger.info("bus: \(session.label) left: \(reason)\(shortfalls)")
    }

    /// What the ports of a leaving client missed, for its leave line: a dropout a listener heard
    /// stays in the log after the client's counters are gone. Empty when nothing was missed.
    static func shortfalls(_ ports: some Collection<ClientPortRecord>) -> String {
        let missed = ports.sorted { $0.name < $1.name }.compactMap { port -> String? in
            let under = port.underruns, over = port.overruns
            guard under > 0 || over > 0 else { return nil }
            return "\(port.name) \(under) underrun\(under == 1 ? "" : "s"), \(over) overrun\(over == 1 ? "" : "s")"
        }
        return missed.isEmpty ? "" : "; " + missed.joined(separator: "; ")
    }

    func publish() {
        let reports = sessions.compactMap { s in
            s.name.map { ClientReport(name: $0, pid: s.pid, ports: s.ports.values.sorted { $0.name < $1.name }) }
        }
        published.withLock { $0 = reports }
        connectionCount.store(sessions.count, ordering: .relaxed)
    }

    var sessionNames: [String] { sessions.compactMap(\.name) }

    /// A client whose ring the audio thread found corrupt has already been silenced there; here
    /// it is counted, named in one log line, and disconnected. Nobody else notices.
    private func disconnectFaultedClients() {
        for session in sessions {
            guard let (name, fault) = session.ports.values.lazy.compactMap({ r in r.counters.fault.map { (r.name, $0) } }).first
            else { continue }
            ringFaults.add(1, ordering: .relaxed)
            end(session, reason: "its shared memory for \(name) is corrupt (\(fault)); the port was silenced and the client disconnected")
        }
    }
}

extension BusEvent {
    init(_ change: EngineChange) {
        switch change {
        case .portAdded(let name): self = .portAdded(name)
        case .portRemoved(let name): self = .portRemoved(name)
        case .connectionsChanged: self = .connectionsChanged
        case let .muteChanged(port, muted): self = .muteChanged(port: port, muted: muted)
        }
    }
}

