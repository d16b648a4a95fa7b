import StageboxTriggers

/// Turns MIDI messages into trigger events and trigger states into MIDI messages, as a pure
/// state machine (no ALSA): the caller passes every message with its time and calls
/// `advance(to:)` when `nextDeadline` comes (a long press fires while the key is still held).
public struct MIDIMapper: Sendable {
    /// What one message (or the passing of time) did to one mapping.
    public struct Fired: Sendable, Equatable {
        /// The index of the mapping in `mappings`.
        public var mapping: Int
        public var event: ButtonEvent
        /// The trigger it fires; nil when the mapping names none for this event.
        public var trigger: String?
    }

    public let mappings: [MIDIMapping]
    private var machines: [ButtonMachine]
    /// The channel each mapping last heard from: where an "any" mapping's feedback goes.
    private var lastChannel: [Int]

    public init(_ mappings: [MIDIMapping]) {
        self.mappings = mappings
        machines = mappings.map { $0.machine() }
        lastChannel = mappings.map { $0.channel ?? 1 }
    }

    /// What `message` fires; nil when no mapping is about it (a key nobody mapped), an empty
    /// list when one is but nothing changed (a second note-on of a held key, a controller
    /// moving above 64).
    public mutating func receive(_ message: MIDIMessage, at now: Int64) -> [Fired]? {
        var fired: [Fired] = []
        var matched = false
        for i in mappings.indices where mappings[i].matches(message) {
            matched = true
            lastChannel[i] = message.channel
            let events = machines[i].edge(pressed: message.isDown, at: now)
            fired += events.map { Fired(mapping: i, event: $0, trigger: mappings[i].trigger(for: $0)) }
        }
        return matched ? fired : nil
    }

    /// The long presses due at `now`.
    public mutating func advance(to now: Int64) -> [Fired] {
        var fired: [Fired] = []
        for i in machines.indices {
            fired += machines[i].advance(to: now).map { Fired(mapping: i, event: $0, trigger: mappings[i].trigger(for: $0)) }
        }
        return fired
    }

    /// When a long press is next due; nil when no key with one is held.
    public var nextDeadline: Int64? { machines.compactMap(\.nextDeadline).min() }

    /// Every trigger some mapping fires, each once, in the order of the mappings.
    public var triggers: [String] {
        var seen: Set<String> = []
        return mappings.flatMap { [$0.press, $0.release, $0.longPress].compactMap { $0 } }.filter { seen.insert($0).inserted }
    }

    /// What shows `trigger`'s state on a controller: for every mapping that fires it, its note
    /// or controller lit (note-on velocity 127, controller value 127) while the trigger is
    /// selected, alternate or in error, dark (note-off, value 0) while normal or disabled or
    /// gone (nil).
    public func feedback(trigger: String, state: TriggerState?) -> [MIDIMessage] {
        let lit = state.map(Self.isLit) ?? false
        var messages: [MIDIMessage] = []
        for (i, m) in mappings.enumerated() where m.names(trigger) {
            let channel = m.channel ?? lastChannel[i]
            let message: MIDIMessage = switch m.control {
            case .note(let n): lit ? .noteOn(channel: channel, note: n, velocity: 127) : .noteOff(channel: channel, note: n, velocity: 0)
            case .controller(let n): .controlChange(channel: channel, controller: n, value: lit ? 127 : 0)
            }
            if !messages.contains(message) { messages.append(message) }
        }
        return messages
    }

    static func isLit(_ state: TriggerState) -> Bool {
        switch state {
        case .selected, .alternate, .error: true
        case .normal, .disabled: false
        }
    }
}
