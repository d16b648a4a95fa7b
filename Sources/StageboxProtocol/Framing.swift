/// A message with the request id it answers (0 for events and for requests that want no answer).
public struct Framed<Message: Sendable>: Sendable {
    public var requestID: UInt32
    public var message: Message

    public init(requestID: UInt32, message: Message) {
        self.requestID = requestID
        self.message = message
    }
}

/// The frame: u32 length of what follows, u16 message type, u32 request id, the body.
public enum Frame {
    static func wrap(type: UInt16, requestID: UInt32, body: [UInt8]) -> [UInt8] {
        var w = WireWriter()
        w.u32(UInt32(6 + body.count))
        w.u16(type)
        w.u32(requestID)
        return w.bytes + body
    }

    /// Takes one whole frame off the front of `buffer`, or nil when it holds only part of one.
    /// Throws for a frame whose length is out of bounds (the connection cannot recover from that).
    public static func next(from buffer: inout [UInt8]) throws(ProtocolError) -> (type: UInt16, requestID: UInt32, body: ArraySlice<UInt8>)? {
        guard buffer.count >= 4 else { return nil }
        let length = Int(UInt32(buffer[0]) | UInt32(buffer[1]) << 8 | UInt32(buffer[2]) << 16 | UInt32(buffer[3]) << 24)
        guard length >= 6 else { throw .truncated(needed: 6, had: length) }
        guard length + 4 <= maximumFrameSize else { throw .oversized(length: length + 4, limit: maximumFrameSize) }
        guard buffer.count >= 4 + length else { return nil }
        var r = WireReader(buffer[4..<10])
        let type = try r.u16()
        let id = try r.u32()
        let body = Array(buffer[10..<(4 + length)])[...]
        buffer.removeFirst(4 + length)
        return (type, id, body)
    }
}

extension ClientMessage {
    var type: UInt16 {
        switch self {
        case .hello: return 1
        case .createPort: return 2
        case .removePort: return 3
        case .listPorts: return 4
        case .listConnections: return 5
        case .connect: return 6
        case .disconnect: return 7
        case .setMuted: return 8
        case .fireTrigger: return 9
        case .consoleLine: return 10
        case .consoleComplete: return 11
        case .createTrigger: return 12
        case .setTriggerState: return 13
        case .removeTrigger: return 14
        }
    }

    public func encoded(requestID: UInt32) -> [UInt8] {
        var w = WireWriter()
        switch self {
        case let .hello(name, version): w.string(name); w.u16(version)
        case let .createPort(p):
            w.string(p.name); w.string(p.title); w.u8(p.kind.rawValue); w.u16(UInt16(clamping: p.channels))
            w.u8(p.format.rawValue); w.u32(UInt32(clamping: p.sampleRate)); w.u8(p.receiverMode.rawValue)
        case let .removePort(name): w.string(name)
        case .listPorts, .listConnections: break
        case let .connect(from, to), let .disconnect(from, to): w.string(from); w.string(to)
        case let .setMuted(port, muted): w.string(port); w.bool(muted)
        case let .fireTrigger(name), let .removeTrigger(name): w.string(name)
        case let .createTrigger(name, title, state): w.string(name); w.string(title); w.u8(state)
        case let .setTriggerState(name, state): w.string(name); w.u8(state)
        case let .consoleLine(line), let .consoleComplete(line): w.string(line)
        }
        return Frame.wrap(type: type, requestID: requestID, body: w.bytes)
    }

    public static func decode(type: UInt16, body: ArraySlice<UInt8>) throws(ProtocolError) -> ClientMessage {
        var r = WireReader(body)
        let m: ClientMessage
        switch type {
        case 1: m = .hello(clientName: try r.string(), version: try r.u16())
        case 2:
            let name = try r.string(), title = try r.string()
            guard let kind = WireKind(rawValue: try r.u8()) else { throw .invalidValue("port kind") }
            let channels = Int(try r.u16())
            guard let format = WireFormat(rawValue: try r.u8()) else { throw .invalidValue("sample format") }
            let rate = Int(try r.u32())
            guard let mode = ReceiverMode(rawValue: try r.u8()) else { throw .invalidValue("receiver mode") }
            m = .createPort(PortRequest(name: name, title: title, kind: kind, channels: channels, format: format,
                                        sampleRate: rate, receiverMode: mode))
        case 3: m = .removePort(try r.string())
        case 4: m = .listPorts
        case 5: m = .listConnections
        case 6: m = .connect(from: try r.string(), to: try r.string())
        case 7: m = .disconnect(from: try r.string(), to: try r.string())
        case 8: m = .setMuted(port: try r.string(), muted: try r.bool())
        case 9: m = .fireTrigger(try r.string())
        case 10: m = .consoleLine(try r.string())
        case 11: m = .consoleComplete(try r.string())
        case 12: m = .createTrigger(name: try r.string(), title: try r.string(), state: try r.u8())
        case 13: m = .setTriggerState(name: try r.string(), state: try r.u8())
        case 14: m = .removeTrigger(try r.string())
        default: throw .unknownMessageType(type)
        }
        try r.finish()
        return m
    }
}

extension ServerMessage {
    var type: UInt16 {
        switch self {
        case .welcome: return 100
        case .portCreated: return 101
        case .ok: return 102
        case .error: return 103
        case .ports: return 104
        case .connections: return 105
        case .event: return 106
        case .consoleAnswer: return 107
        case .completions: return 108
        }
    }

    public func encoded(requestID: UInt32) -> [UInt8] {
        var w = WireWriter()
        switch self {
        case let .welcome(version, rate, period, name):
            w.string(version); w.u32(UInt32(rate)); w.u32(UInt32(period)); w.string(name)
        case let .portCreated(info, frames): Self.write(info, &w); w.u32(UInt32(frames))
        case .ok: break
        case let .error(code, text): w.u16(code.rawValue); w.string(text)
        case let .ports(list): w.u32(UInt32(list.count)); for p in list { Self.write(p, &w) }
        case let .connections(list): w.u32(UInt32(list.count)); for c in list { w.string(c.from); w.string(c.to) }
        case let .event(e):
            switch e {
            case .connectionsChanged: w.u8(0)
            case .portAdded(let n): w.u8(1); w.string(n)
            case .portRemoved(let n): w.u8(2); w.string(n)
            case let .muteChanged(p, m): w.u8(3); w.string(p); w.bool(m)
            case let .triggerChanged(n, s): w.u8(4); w.string(n); w.u8(s)
            case .serverStopping: w.u8(5)
            case let .lifecycleChanged(state, reason): w.u8(6); w.string(state); w.string(reason)
            case let .triggerAdded(n, title, state): w.u8(7); w.string(n); w.string(title); w.u8(state)
            case .triggerRemoved(let n): w.u8(8); w.string(n)
            case .triggerFired(let n): w.u8(9); w.string(n)
            }
        case let .consoleAnswer(text, failed):
            w.long(text)
            w.bool(failed)
        case let .completions(list): w.u32(UInt32(list.count)); for c in list { w.string(c) }
        }
        return Frame.wrap(type: type, requestID: requestID, body: w.bytes)
    }

    private static func write(_ p: PortInfo, _ w: inout WireWriter) {
        w.string(p.name); w.string(p.title); w.u8(p.kind.rawValue); w.u16(UInt16(clamping: p.channels))
        w.bool(p.muted); w.string(p.owner)
    }

    private static func readPort(_ r: inout WireReader) throws(ProtocolError) -> PortInfo {
        let name = try r.string(), title = try r.string()
        guard let kind = WireKind(rawValue: try r.u8()) else { throw .invalidValue("port kind") }
        return PortInfo(name: name, title: title, kind: kind, channels: Int(try r.u16()), muted: try r.bool(),
                        owner: try r.string())
    }

    public static func decode(type: UInt16, body: ArraySlice<UInt8>) throws(ProtocolError) -> ServerMessage {
        var r = WireReader(body)
        let m: ServerMessage
        switch type {
        case 100: m = .welcome(serverVersion: try r.string(), sampleRate: Int(try r.u32()), period: Int(try r.u32()),
                               clientName: try r.string())
        case 101: m = .portCreated(try readPort(&r), ringFrames: Int(try r.u32()))
        case 102: m = .ok
        case 103:
            let code = try r.u16()
            m = .error(BusErrorCode(rawValue: code) ?? .badRequest, try r.string())
        case 104:
            let n = try r.count(minimumSize: 9)
            var list: [PortInfo] = []
            for _ in 0..<n { list.append(try readPort(&r)) }
            m = .ports(list)
        case 105:
            let n = try r.count(minimumSize: 4)
            var list: [(from: String, to: String)] = []
            for _ in 0..<n { list.append((try r.string(), try r.string())) }
            m = .connections(list)
        case 106:
            switch try r.u8() {
            case 0: m = .event(.connectionsChanged)
            case 1: m = .event(.portAdded(try r.string()))
            case 2: m = .event(.portRemoved(try r.string()))
            case 3: m = .event(.muteChanged(port: try r.string(), muted: try r.bool()))
            case 4: m = .event(.triggerChanged(name: try r.string(), state: try r.u8()))
            case 5: m = .event(.serverStopping)
            case 6: m = .event(.lifecycleChanged(state: try r.string(), reason: try r.string()))
            case 7: m = .event(.triggerAdded(name: try r.string(), title: try r.string(), state: try r.u8()))
            case 8: m = .event(.triggerRemoved(try r.string()))
            case 9: m = .event(.triggerFired(try r.string()))
            case let k: throw .invalidValue("event kind \(k)")
            }
        case 107: m = .consoleAnswer(try r.long(), failed: try r.bool())
        case 108:
            let n = try r.count(minimumSize: 2)
            var list: [String] = []
            for _ in 0..<n { list.append(try r.string()) }
            m = .completions(list)
        default: throw .unknownMessageType(type)
        }
        try r.finish()
        return m
    }
}
