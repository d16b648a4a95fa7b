import Logging
import StageboxConfig
import StageboxMIDI
import StageboxTriggers

/// The MIDI of `stagebox run`: `[midi]` makes Stagebox a sequencer client whose mapped notes
/// and controllers fire triggers and show their states. A sequencer that cannot be opened
/// (no /dev/snd/seq, as in containers) is logged, and the rest runs without MIDI.
final class RunningMIDI: Sendable {
    let service: MIDIService?
    /// Why there is no MIDI, when there is none.
    let problem: String?

    private init(service: MIDIService?, problem: String?) {
        self.service = service
        self.problem = problem
    }

    /// nil when the configuration has no `[midi]`.
    static func start(_ config: StageboxConfiguration, triggers: TriggerBoard, logger: Logger) -> RunningMIDI? {
        guard let section = config.midi else { return nil }
        do {
            let service = try MIDIService(mappings: section.maps.map(mapping), connect: policy(section.connect),
                                          triggers: triggers, logger: logger)
            triggers.onChange { name, _ in service.triggerChanged(name) }
            triggers.onRemove { service.triggerChanged($0) } // a client's trigger gone: its pad goes dark
            let s = service.status
            let count = "\(section.maps.count) mapping" + (section.maps.count == 1 ? "" : "s")
            logger.info("midi: sequencer client \(s.client) \"Stagebox\" (MIDI in \(s.client):\(s.inPort), MIDI out \(s.client):\(s.outPort)), connect \(describe(section.connect)), \(count)")
            try service.start()
            return RunningMIDI(service: service, problem: nil)
        } catch {
            logger.error("midi: \(error); running without MIDI")
            return RunningMIDI(service: nil, problem: "\(error)")
        }
    }

    func stop() { service?.stop() }

    /// The line of `status`.
    var statusLine: String { service.map { $0.status.summary } ?? "not running: \(problem ?? "")" }

    /// The answer of the console's `midi`.
    var lines: [String] { service.map { $0.status.lines } ?? ["MIDI is not running: \(problem ?? "")"] }

    static func mapping(_ entry: MIDIMapEntry) -> MIDIMapping {
        func trigger(_ name: String) -> String? { name.isEmpty ? nil : name }
        let control: MIDIControl = entry.note.map { .note($0) } ?? .controller(entry.cc ?? 0)
        return MIDIMapping(control: control, channel: entry.channel, press: trigger(entry.press), release: trigger(entry.release),
                           longPress: trigger(entry.longPress), longPressNanos: Int64(entry.longPressMs) * 1_000_000)
    }

    static func policy(_ setting: MIDIConnectSetting) -> MIDIConnectPolicy {
        switch setting {
        case .all: .all
        case .none: .none
        case .clients(let names): .clients(names)
        }
    }

    static func describe(_ setting: MIDIConnectSetting) -> String {
        switch setting {
        case .all: "all"
        case .none: "none"
        case .clients(let names): names.map { "\"\($0)\"" }.joined(separator: ", ")
        }
    }
}
