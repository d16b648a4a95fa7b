/// What the MIDI thread has seen, for the console and the logs.
public struct MIDICounters: Sendable, Equatable {
    /// Channel messages and other events from peers (announcements not counted).
    public var received = 0
    /// Messages some mapping was about.
    public var mapped = 0
    /// Well-formed notes and controllers no mapping names.
    public var unmapped = 0
    /// Events Stagebox does not map (sysex, clock, program change, …), by kind.
    public var ignoredByKind: [String: Int] = [:]
    /// Reads that found the kernel had dropped events (a flood faster than Stagebox reads).
    public var overruns = 0
    public var sent = 0
    public var sendFailures = 0

    public init() {}

    public var ignored: Int { ignoredByKind.values.reduce(0, +) }

    /// `12 received, 3 mapped, 1 unmapped, 8 ignored (sysex 7, realtime 1), 0 overruns, 4 sent`.
    public var summary: String {
        let kinds = ignoredByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(received) received, \(mapped) mapped, \(unmapped) unmapped, \(ignored) ignored"
            + (kinds.isEmpty ? "" : " (\(kinds))") + ", \(overruns) overruns, \(sent) sent"
            + (sendFailures > 0 ? ", \(sendFailures) not sent" : "")
    }
}

/// The MIDI client as the console shows it.
public struct MIDIStatus: Sendable, Equatable {
    /// Stagebox's own client number.
    public var client: Int
    public var inPort = 0
    public var outPort = 1
    /// What is connected to "MIDI in", and what "MIDI out" is connected to.
    public var sources: [SequencerPort] = []
    public var destinations: [SequencerPort] = []
    public var counters = MIDICounters()

    public init(client: Int) { self.client = client }

    /// `2 sources, 1 destination; 12 received, …`.
    public var summary: String {
        "client \(client), \(sources.count) source\(sources.count == 1 ? "" : "s"), "
            + "\(destinations.count) destination\(destinations.count == 1 ? "" : "s"); \(counters.summary)"
    }

    /// The peers one a line, then the counters.
    public var lines: [String] {
        var lines = ["client \(client) \"Stagebox\": MIDI in \(client):\(inPort), MIDI out \(client):\(outPort)"]
        lines += sources.isEmpty ? ["no sources"] : sources.map { "source       \($0.description)" }
        lines += destinations.isEmpty ? ["no destinations"] : destinations.map { "destination  \($0.description)" }
        lines.append("events       \(counters.summary)")
        return lines
    }
}
