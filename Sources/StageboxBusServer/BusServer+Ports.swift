import StageboxEngine
import StageboxPortRules
import StageboxProtocol
import StageboxSystem

extension BusServer {
    /// Frames a client ring holds: 340 ms at 48 kHz, so that a client on a busy machine can be
    /// kept from running for a while without a gap (a ring only holds what the client keeps in it).
    var ringFrames: Int { max(16384, 32 * period) }

    func createPort(_ request: PortRequest, client: String, session: ClientSession, id: UInt32) {
        portRequestedAt.store(monotonicNanoseconds(), ordering: .relaxed)
        guard session.ports.count < settings.maxPortsPerClient else {
            return reply(session, id, .error(.limit, "\(client) has its maximum of \(settings.maxPortsPerClient) ports"))
        }
        let full = "\(client).\(request.name)"
        do throws(PortRuleViolation) {
            try PortRules.checkClientPortName(request.name, client: client)
            try PortRules.checkChannels(request.channels, port: full)
        } catch {
            return reply(session, id, .error(.badRequest, error.description))
        }
        guard (8000...192_000).contains(request.sampleRate) else {
            return reply(session, id, .error(.badRequest, "sample rate \(request.sampleRate) is out of range (8000 to 192000)"))
        }
        guard request.kind != .receiver || request.receiverMode == .mixed || request.sampleRate == engine.settings.sampleRate else {
            return reply(session, id, .error(.refused, "a receiver of separate streams runs at the bus rate (\(engine.settings.sampleRate) Hz)"))
        }
        guard session.ports[full] == nil else { return reply(session, id, .error(.exists, "\(full) already exists")) }

        let built: (PortProcessor, [SharedRing], [OwnedDescriptor])
        let counters = ClientPortCounters()
        do throws(RingError) {
            built = try makeProcessor(request, name: full, counters: counters)
        } catch {
            return reply(session, id, .error(.refused, "cannot make shared memory for \(full): \(error)"))
        }
        // The client's ends of the wakeups are closed here once sent (or on any way out).
        let (processor, rings, wakes) = built
        do throws(EngineError) {
            try engine.addPort(PortDescriptor(name: full, title: request.title.isEmpty ? full : request.title,
                                              kind: PortKind(request.kind), channels: request.channels),
                               processor: processor)
        } catch {
            return reply(session, id, .error(Self.code(for: error), error.description))
        }
        session.ports[full] = ClientPortRecord(
            name: full, kind: "\(request.kind)", channels: request.channels, clientRate: request.sampleRate,
            format: request.format == .int16 ? "int16" : "float32", rings: rings.map { SharedRingHandle(ring: $0) },
            counters: counters, separate: request.kind == .receiver && request.receiverMode == .separate)
        publish()
        let info = PortInfo(name: full, title: request.title, kind: request.kind, channels: request.channels,
                            muted: false, owner: client)
        // The client's ends stay owned here until the reply is sent; they close when `wakes` goes.
        reply(session, id, .portCreated(info, ringFrames: ringFrames),
              fds: rings.map(\.fileDescriptor) + wakes.compactMap(\.descriptor))
        withExtendedLifetime(wakes) {}
    }

    /// The audio-thread side of a client port with its rings, and the client's ends of its
    /// wakeups, in the order the client receives their descriptors.
    private func makeProcessor(_ request: PortRequest, name: String, counters: ClientPortCounters) throws(RingError)
        -> (PortProcessor, [SharedRing], [OwnedDescriptor]) {
        func wakeup() throws(RingError) -> (Wakeup, OwnedDescriptor) {
            do { return try Wakeup.pair(purpose: "the port \(name)") } catch { throw .system(error) }
        }
        let frames = ringFrames
        switch request.kind {
        case .sender:
            let ring = try SharedRing.create(name: name, channels: request.channels, capacity: frames)
            let (wake, theirs) = try wakeup()
            return (ClientSenderProcessor(ring: ring, wake: wake, counters: counters, fade: engine.outputFade), [ring], [theirs])
        case .receiver where request.receiverMode == .separate:
            let ring = try SharedRing.create(name: name, channels: request.channels * SharedRing.sourceSlots,
                                             capacity: frames)
            let (wake, theirs) = try wakeup()
            return (ClientSeparateReceiverProcessor(ring: ring, wake: wake, channels: request.channels,
                                                    period: engine.settings.period, counters: counters), [ring], [theirs])
        case .receiver:
            let ring = try SharedRing.create(name: name, channels: request.channels, capacity: frames)
            let (wake, theirs) = try wakeup()
            return (ClientReceiverProcessor(ring: ring, wake: wake, counters: counters), [ring], [theirs])
        case .filter:
            let toClient = try SharedRing.create(name: name + ".in", channels: request.channels, capacity: frames)
            let fromClient = try SharedRing.create(name: name + ".out", channels: request.channels, capacity: frames)
            let (wakeClient, clientEnd) = try wakeup()
            let (wakeServer, serverEnd) = try wakeup()
            // One share of the period for all filters together, counted from the period's start.
            let budget = Int64(period) * 1_000_000_000 / Int64(engine.settings.sampleRate)
                * Int64(settings.filterDeadlinePercent) / 100
            let processor = ClientFilterProcessor(toClient: toClient, fromClient: fromClient, wakeClient: wakeClient,
                                                  wakeServer: wakeServer, budgetNanos: budget,
                                                  period: engine.settings.period, counters: counters)
            return (processor, [toClient, fromClient], [clientEnd, serverEnd])
        }
    }
}

extension BusServer {
    /// Names the sources of every separate-streams receiver in its ring, in connection order.
    func nameSeparateSources(_ sessions: [ClientSession]) {
        let connections = engine.connections
        for session in sessions {
            for record in session.ports.values where record.separate {
                let names = connections.filter { $0.to == record.name }.map(\.from)
                record.rings.first?.ring.setSourceNames(names)
            }
        }
    }
}
