import Logging
import StageboxEngine
import StageboxPortRules
import StageboxProtocol

extension BusServer {
    /// Handles one well-formed request of `session`.
    func handle(_ message: ClientMessage, id: UInt32, from session: ClientSession) {
        if case let .hello(name, version) = message {
            return hello(session, id, name: name, version: version)
        }
        guard let client = session.name else {
            return reply(session, id, .error(.notReady, "say hello first"))
        }
        switch message {
        case .hello:
            break
        case .createPort(let request):
            createPort(request, client: client, session: session, id: id)
        case .removePort(let name):
            let full = name.contains(".") ? name : "\(client).\(name)"
            guard let record = session.ports[full] else {
                return reply(session, id, .error(.noSuchPort, "\(full) is not a port of \(client)"))
            }
            try? engine.removePort(full)
            session.ports[full] = nil
            publish()
            // What it missed stays in the log (the ALSA plugin removes its port before it leaves).
            let missed = Self.shortfalls([record])
            if !missed.isEmpty { logger.info("bus: \(session.label) removed \(full)\(missed)") }
            reply(session, id, .ok)
        case .listPorts:
            reply(session, id, .ports(portInfos()))
        case .listConnections:
            reply(session, id, .connections(engine.connections.map { ($0.source.description, $0.destination.description) }))
        case let .connect(from, to):
            perform(session, id) { () throws(EngineError) in try engine.connect(from: from, to: to) }
        case let .disconnect(from, to):
            perform(session, id) { () throws(EngineError) in try engine.disconnect(from: from, to: to) }
        case let .setMuted(port, muted):
            perform(session, id) { () throws(EngineError) in try engine.setMuted(port, muted) }
        case .consoleLine(let line):
            guard let console = consoleHandler.withLock({ $0 }) else {
                return reply(session, id, .error(.refused, "this stagebox has no console"))
            }
            let (text, failed) = console.execute(line)
            reply(session, id, .consoleAnswer(text, failed: failed))
        case .consoleComplete(let line):
            reply(session, id, .completions(consoleHandler.withLock({ $0 })?.complete(line) ?? []))
        case .fireTrigger(let name):
            fireTrigger(name, session: session, id: id)
        case let .createTrigger(name, title, state):
            createTrigger(name: name, title: title, state: state, client: client, session: session, id: id)
        case let .setTriggerState(name, state):
            setTriggerState(name: name, state: state, client: client, session: session, id: id)
        case .removeTrigger(let name):
            removeTrigger(name: name, client: client, session: session, id: id)
        }
    }

    private func hello(_ session: ClientSession, _ id: UInt32, name: String, version: UInt16) {
        guard session.name == nil else { return reply(session, id, .error(.badRequest, "hello was already said")) }
        guard version == busProtocolVersion else {
            reply(session, id, .error(.versionMismatch, "protocol version \(version) is not \(busProtocolVersion)"))
            return end(session, reason: "protocol version \(version)")
        }
        do throws(PortRuleViolation) { try PortRules.checkClientName(name) } catch {
            return reply(session, id, .error(.badRequest, error.description))
        }
        guard !sessionNames.contains(name) else {
            return reply(session, id, .error(.exists, "a client named \(name) is already connected"))
        }
        session.name = name
        publish()
        logger.info("bus: hello from \(session.label)")
        reply(session, id, .welcome(serverVersion: serverVersion, sampleRate: engine.settings.sampleRate,
                                    period: period, clientName: name))
    }

    /// Makes a change and answers; the engine announces the change itself.
    private func perform(_ session: ClientSession, _ id: UInt32, _ body: () throws(EngineError) -> Void) {
        do throws(EngineError) {
            try body()
            reply(session, id, .ok)
        } catch {
            reply(session, id, .error(Self.code(for: error), error.description))
        }
    }

    static func code(for error: EngineError) -> BusErrorCode {
        switch error {
        case .noSuchPort: return .noSuchPort
        case .portExists, .alreadyConnected: return .exists
        default: return .refused
        }
    }

    func portInfos() -> [PortInfo] {
        engine.ports.map { p in
            let owner = p.name.split(separator: ".").first.map(String.init) ?? p.name
            let isClient = sessionNames.contains(owner) && p.name.contains(".")
            return PortInfo(name: p.name, title: p.title, kind: WireKind(p.kind), channels: p.channels,
                            muted: (try? engine.isMuted(p.name)) ?? false, owner: isClient ? owner : "stagebox")
        }
    }
}

extension WireKind {
    init(_ kind: PortKind) {
        switch kind {
        case .sender: self = .sender
        case .filter: self = .filter
        case .receiver: self = .receiver
        }
    }
}

extension PortKind {
    init(_ kind: WireKind) {
        switch kind {
        case .sender: self = .sender
        case .filter: self = .filter
        case .receiver: self = .receiver
        }
    }
}
