import CALSA

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Stagebox's ALSA sequencer client: a "MIDI in" port that peers write to, a "MIDI out" port
/// they read from, and a private port subscribed to the System client's announcements. A thin
/// layer over alsa-lib; what the events mean is `SequencerInput`'s and `MIDIMapper`'s.
// @unchecked: opened on the starting thread, then handed to the MIDI thread, the only one to
// use it until it is closed after that thread has been joined.
final class Sequencer: @unchecked Sendable {
    private let handle: OpaquePointer
    let client: Int
    let inPort: Int32
    let outPort: Int32

    /// Opens the sequencer (non-blocking) as client `name` with its ports.
    init(name: String) throws(MIDIError) {
        var opened: OpaquePointer?
        let rc = snd_seq_open(&opened, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK)
        guard rc >= 0, let opened else {
            throw MIDIError("opening the ALSA sequencer (/dev/snd/seq; is snd-seq loaded?)", code: rc)
        }
        handle = opened
        do throws(MIDIError) {
            try Self.check(snd_seq_set_client_name(opened, name), "naming the sequencer client \(name)")
            client = Int(snd_seq_client_id(opened))
            let application = UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)
            inPort = try Self.port(opened, "MIDI in", caps: SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE, type: application)
            outPort = try Self.port(opened, "MIDI out", caps: SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ, type: application)
            // Nobody else may connect to it: it only hears the System client.
            let announcements = try Self.port(opened, "announcements", caps: SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_NO_EXPORT,
                                              type: UInt32(SND_SEQ_PORT_TYPE_APPLICATION))
            try Self.check(snd_seq_connect_from(opened, announcements, SND_SEQ_CLIENT_SYSTEM, SND_SEQ_PORT_SYSTEM_ANNOUNCE),
                           "subscribing to the System client's announcements (0:1)")
        } catch {
            snd_seq_close(opened)
            throw error
        }
    }

    deinit { snd_seq_close(handle) }

    private static func check(_ rc: Int32, _ what: @autoclosure () -> String) throws(MIDIError) {
        if rc < 0 { throw MIDIError(what(), code: rc) }
    }

    private static func port(_ handle: OpaquePointer, _ name: String, caps: Int32, type: UInt32) throws(MIDIError) -> Int32 {
        let port = snd_seq_create_simple_port(handle, name, UInt32(caps), type)
        try check(port, "creating the sequencer port '\(name)'")
        return port
    }

    var inAddress: SequencerAddress { SequencerAddress(client: client, port: Int(inPort)) }
    var outAddress: SequencerAddress { SequencerAddress(client: client, port: Int(outPort)) }

    /// The descriptors to poll for input.
    func pollDescriptors() -> [pollfd] {
        let count = snd_seq_poll_descriptors_count(handle, Int16(POLLIN))
        guard count > 0 else { return [] }
        var fds = [pollfd](repeating: pollfd(), count: Int(count))
        let filled = snd_seq_poll_descriptors(handle, &fds, UInt32(count), Int16(POLLIN))
        return Array(fds.prefix(Int(max(0, filled))))
    }

    /// Every event waiting, each to `body`. Returns the errors met on the way: -ENOSPC is an
    /// overrun (the kernel dropped events: a flood faster than this thread reads); reading
    /// goes on after one.
    func readAll(_ body: (snd_seq_event_t) -> Void) -> [Int32] {
        var errors: [Int32] = []
        while true {
            var event: UnsafeMutablePointer<snd_seq_event_t>?
            let rc = snd_seq_event_input(handle, &event)
            if rc == -EAGAIN { return errors }
            if rc < 0 {
                errors.append(rc)
                // Anything but an overrun could repeat forever.
                if rc != -ENOSPC || errors.count > 64 { return errors }
                continue
            }
            if let event { body(event.pointee) }
        }
    }

    /// Sends `message` from "MIDI out" to `destination`, or to everything connected to it
    /// (nil); an alsa-lib error code (negative) or 0.
    func send(_ message: MIDIMessage, to destination: SequencerAddress? = nil) -> Int32 {
        var event = message.event(from: outPort, to: destination)
        let rc = snd_seq_event_output_direct(handle, &event)
        return rc < 0 ? rc : 0
    }

    /// Every port of every client, with its client's name and what it can do.
    func allPorts() -> [SequencerPort] {
        var ports: [SequencerPort] = []
        var clientInfo: OpaquePointer?
        var portInfo: OpaquePointer?
        guard snd_seq_client_info_malloc(&clientInfo) == 0, snd_seq_port_info_malloc(&portInfo) == 0 else { return [] }
        defer {
            snd_seq_client_info_free(clientInfo)
            snd_seq_port_info_free(portInfo)
        }
        snd_seq_client_info_set_client(clientInfo, -1)
        while snd_seq_query_next_client(handle, clientInfo) >= 0 {
            let client = snd_seq_client_info_get_client(clientInfo)
            let clientName = String(cString: snd_seq_client_info_get_name(clientInfo))
            snd_seq_port_info_set_client(portInfo, client)
            snd_seq_port_info_set_port(portInfo, -1)
            while snd_seq_query_next_port(handle, portInfo) >= 0 {
                ports.append(Self.describe(portInfo, clientName: clientName))
            }
        }
        return ports
    }

    /// One port, or nil when it is gone (or never was).
    func port(_ address: SequencerAddress) -> SequencerPort? {
        var clientInfo: OpaquePointer?
        var portInfo: OpaquePointer?
        guard snd_seq_client_info_malloc(&clientInfo) == 0, snd_seq_port_info_malloc(&portInfo) == 0 else { return nil }
        defer {
            snd_seq_client_info_free(clientInfo)
            snd_seq_port_info_free(portInfo)
        }
        guard snd_seq_get_any_client_info(handle, Int32(address.client), clientInfo) >= 0,
              snd_seq_get_any_port_info(handle, Int32(address.client), Int32(address.port), portInfo) >= 0 else { return nil }
        return Self.describe(portInfo, clientName: String(cString: snd_seq_client_info_get_name(clientInfo)))
    }

    private static func describe(_ info: OpaquePointer?, clientName: String) -> SequencerPort {
        let caps = Int32(bitPattern: snd_seq_port_info_get_capability(info))
        func can(_ bits: Int32) -> Bool { caps & bits == bits && caps & SND_SEQ_PORT_CAP_NO_EXPORT == 0 }
        let address = SequencerAddress(client: Int(snd_seq_port_info_get_client(info)), port: Int(snd_seq_port_info_get_port(info)))
        return SequencerPort(address: address, clientName: clientName,
                             portName: String(cString: snd_seq_port_info_get_name(info)),
                             isSource: can(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ),
                             isDestination: can(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE))
    }

    /// Subscribes "MIDI in" to `source`. -EBUSY (already connected) is no error.
    func connect(from source: SequencerAddress) throws(MIDIError) {
        let rc = snd_seq_connect_from(handle, inPort, Int32(source.client), Int32(source.port))
        if rc < 0 && rc != -EBUSY { throw MIDIError("connecting \(source) to Stagebox's MIDI in", code: rc) }
    }

    /// Subscribes `destination` to "MIDI out". -EBUSY (already connected) is no error.
    func connect(to destination: SequencerAddress) throws(MIDIError) {
        let rc = snd_seq_connect_to(handle, outPort, Int32(destination.client), Int32(destination.port))
        if rc < 0 && rc != -EBUSY { throw MIDIError("connecting Stagebox's MIDI out to \(destination)", code: rc) }
    }

    /// The ports connected to `port` of ours: writing to it (`readers` false: the sources of
    /// "MIDI in") or reading from it (true: the destinations of "MIDI out").
    func subscribers(of port: Int32, readers: Bool) -> [SequencerAddress] {
        var query: OpaquePointer?
        guard snd_seq_query_subscribe_malloc(&query) == 0 else { return [] }
        defer { snd_seq_query_subscribe_free(query) }
        var root = snd_seq_addr_t(client: UInt8(truncatingIfNeeded: client), port: UInt8(truncatingIfNeeded: port))
        snd_seq_query_subscribe_set_root(query, &root)
        snd_seq_query_subscribe_set_type(query, readers ? SND_SEQ_QUERY_SUBS_READ : SND_SEQ_QUERY_SUBS_WRITE)
        var found: [SequencerAddress] = []
        var index: Int32 = 0
        while true {
            snd_seq_query_subscribe_set_index(query, index)
            guard snd_seq_query_port_subscribers(handle, query) >= 0, let addr = snd_seq_query_subscribe_get_addr(query) else { break }
            found.append(SequencerAddress(client: Int(addr.pointee.client), port: Int(addr.pointee.port)))
            index += 1
        }
        return found
    }
}
