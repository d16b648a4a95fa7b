import CLinux
import Logging
import StageboxEngine
import StageboxControls
import StageboxProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StageboxRealtime

/// Why the bus server could not start.
public struct BusServerError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var what: String
    public var code: Int32

    public var description: String {
        "bus socket \(path): \(what)" + (code != 0 ? ": \(String(cString: strerror(code)))" : "")
    }
}

/// The server side of the client bus: a Unix socket where programs on the board connect, get
/// ports on the engine, and exchange audio through shared memory.
///
/// One thread serves every client with poll(); the audio thread never waits for it. What a
/// client sends is checked before anything is done with it: a bad message gets an error
/// answer, a broken stream a disconnect, and neither stops the audio.
public final class BusServer: @unchecked Sendable {
    public let settings: BusServerSettings
    let engine: Engine
    let triggers: TriggerBoard
    let logger: Logger
    let serverVersion: String
    let period: Int
    private var listener: Int32 = -1
    private let wake: EventFD
    private var thread: PosixThread?
    private let stopping = Atomic<Bool>(false)
    /// Events raised on other threads, broadcast by the server thread.
    private let pendingEvents = Mutex<[BusEvent]>([])
    /// A copy of the client table for other threads (the console, `stagebox clients`).
    private let published = Mutex<[ClientReport]>([])
    private var sessions: [ClientSession] = []
    /// Clients disconnected because their shared memory was found corrupt.
    public let ringFaults = Atomic<Int>(0)
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
                serverVersion: String, period: Int) throws(BusServerError) {
        self.settings = settings
        self.engine = engine
        self.triggers = triggers
        self.logger = logger
        self.serverVersion = serverVersion
        self.period = period
        do { wake = try EventFD() } catch {
            throw BusServerError(path: settings.socketPath, what: "eventfd", code: errno)
        }
    }

    /// A client with its ports, for reports.
    public struct ClientReport: Sendable {
        public var name: String
        public var pid: Int32
        public var ports: [ClientPortRecord]
    }

    public var clients: [ClientReport] { published.withLock { $0 } }

    // MARK: Starting and stopping

    /// Binds the socket (mode 0660, group `audio` when it exists) and starts serving.
    public func start() throws(BusServerError) {
        let path = settings.socketPath
        try Self.prepareDirectory(of: path)
        try Self.removeStaleSocket(at: path)
        let fd = stagebox_unix_stream_socket(1)
        guard fd >= 0 else { throw BusServerError(path: path, what: "socket", code: errno) }
        var address = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { let e = errno; close(fd); throw BusServerError(path: path, what: "bind", code: e) }
        chmod(path, 0o660)
        if let gid = Self.groupID(named: "audio") { chown(path, uid_t.max, gid) }
        guard listen(fd, 16) == 0 else { let e = errno; close(fd); throw BusServerError(path: path, what: "listen", code: e) }
        listener = fd
        triggers.onChange { [weak self] name, state in
            self?.post(.triggerChanged(name: name, state: state.rawValue))
        }
        // Every change is announced from the engine's own change path, whoever made it.
        engine.onChange { [weak self] change in self?.post(BusEvent(change)) }
        thread = try? PosixThread.start { self.serve() }.get()
        logger.info("bus: listening on \(path)")
    }

    /// Tells every client the server is stopping, disconnects them and removes the socket.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        thread?.join()
        thread = nil
        close(listener)
        unlink(settings.socketPath)
    }

    /// Queues an event raised outside the server thread for every client.
    public func post(_ event: BusEvent) {
        pendingEvents.withLock { $0.append(event) }
        wake.signal()
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
            throw BusServerError(path: path, what: "creating \(dir)", code: errno)
        }
    }

    /// A socket file left by a stagebox that died is removed; one that answers is another
    /// stagebox running, and we refuse to take its place.
    private static func removeStaleSocket(at path: String) throws(BusServerError) {
        guard access(path, F_OK) == 0 else { return }
        let probe = stagebox_unix_stream_socket(0)
        defer { close(probe) }
        var address = try address(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if rc == 0 { throw BusServerError(path: path, what: "another stagebox is already serving it", code: 0) }
        unlink(path)
    }

    static func address(_ path: String) throws(BusServerError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw BusServerError(path: path, what: "path longer than \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes", code: 0)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    // MARK: The server thread

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !stopping.load(ordering: .relaxed) {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
            let polled = sessions
            fds += polled.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
            let rc = poll(&fds, nfds_t(fds.count), 100)
            engine.collect()
            disconnectFaultedClients()
            nameSeparateSources(sessions)
            if rc <= 0 { continue }
            if fds[1].revents != 0 {
                wake.drain()
                for event in pendingEvents.withLock({ let e = $0; $0 = []; return e }) { broadcast(event) }
            }
            // The sessions polled, not the current list: accepting adds, handling one may end another.
            for (i, session) in polled.enumerated() where fds[i + 2].revents != 0 {
                if sessions.contains(where: { $0 === session }) { receive(session, into: &buffer) }
            }
            if fds[0].revents & Int16(POLLIN) != 0 { accept() }
        }
        broadcast(.serverStopping)
        for session in sessions { end(session, reason: "server stopping") }
    }

    private func accept() {
        let fd = stagebox_accept(listener)
        guard fd >= 0 else { return }
        let session = ClientSession(socket: fd)
        if sessions.count >= settings.maxClients {
            _ = session.send(ServerMessage.error(.limit, "the bus has its maximum of \(settings.maxClients) clients")
                .encoded(requestID: 0))
            logger.warning("bus: refused \(session.label): \(settings.maxClients) clients already")
            return
        }
        sessions.append(session)
        logger.info("bus: connection from pid \(session.pid) uid \(session.uid) gid \(session.gid)")
    }

    private func receive(_ session: ClientSession, into buffer: inout [UInt8]) {
        var fds = [Int32](repeating: -1, count: 8)
        var count: Int32 = 0
        let n = buffer.withUnsafeMutableBytes { raw in
            fds.withUnsafeMutableBufferPointer { stagebox_recv_with_fds(session.socket, raw.baseAddress, raw.count, $0.baseAddress, 8, &count) }
        }
        // Clients have no reason to send descriptors; do not keep them.
        for i in 0..<Int(count) { close(fds[i]) }
        if n == 0 { return end(session, reason: "disconnected") }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return end(session, reason: "socket error: \(String(cString: strerror(errno)))")
        }
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

    func reply(_ session: ClientSession, _ id: UInt32, _ message: ServerMessage, fds: [Int32] = []) {
        if !session.send(message.encoded(requestID: id), fds: fds) {
            end(session, reason: "not reading its socket")
        }
    }

    func broadcast(_ event: BusEvent) {
        if event == .connectionsChanged { nameSeparateSources(sessions) }
        let bytes = ServerMessage.event(event).encoded(requestID: 0)
        for session in sessions where session.name != nil {
            if !session.send(bytes) { end(session, reason: "not reading its socket") }
        }
    }

    /// Ends a session: its ports leave the bus (their connections fade out), its memory and
    /// descriptors are released once the audio thread has let go of them.
    func end(_ session: ClientSession, reason: String) {
        guard let index = sessions.firstIndex(where: { $0 === session }) else { return }
        sessions.remove(at: index)
        for name in session.ports.keys.sorted() { try? engine.removePort(name) }
        session.ports = [:]
        publish()
        logger.info("bus: \(session.label) left: \(reason)")
    }

    func publish() {
        let reports = sessions.compactMap { s in
            s.name.map { ClientReport(name: $0, pid: s.pid, ports: s.ports.values.sorted { $0.name < $1.name }) }
        }
        published.withLock { $0 = reports }
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

