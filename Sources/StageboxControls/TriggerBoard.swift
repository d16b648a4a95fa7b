import Synchronization

/// A trigger's state as buttons, LEDs and clients show it (Audiobus's trigger states).
/// The raw values are on the wire (bus protocol), so they never change.
public enum TriggerState: UInt8, Sendable, CaseIterable {
    /// Off, e.g. not recording.
    case normal = 0
    /// On, e.g. recording or muted.
    case selected = 1
    /// Cannot be fired now.
    case disabled = 2
    /// A third state between off and on, e.g. record armed or waiting for the disk.
    case alternate = 3
    /// Something went wrong, e.g. the disk is full.
    case error = 4

    /// The name the console, the configuration and the logs use.
    public var name: String {
        switch self {
        case .normal: "normal"
        case .selected: "selected"
        case .disabled: "disabled"
        case .alternate: "alternate"
        case .error: "error"
        }
    }
}

/// Named actions that buttons, clients and the console can fire.
///
/// A trigger has a state (shown by an LED, sent to clients) and an action run on the thread
/// that fires it; the action returns the new state.
public final class TriggerBoard: Sendable {
    public struct Trigger: Sendable {
        public var name: String
        public var title: String
        public var state: TriggerState
        let action: @Sendable () -> TriggerState
    }

    private let triggers = Mutex<[String: Trigger]>([:])
    private let listeners = Mutex<[@Sendable (String, TriggerState) -> Void]>([])

    public init() {}

    /// Adds a trigger; `action` runs when it fires and returns the trigger's new state.
    public func add(name: String, title: String, state: TriggerState = .normal,
                    action: @escaping @Sendable () -> TriggerState) {
        triggers.withLock { $0[name] = Trigger(name: name, title: title, state: state, action: action) }
    }

    /// Calls `listener` after every state change, with the trigger's name and new state.
    public func onChange(_ listener: @escaping @Sendable (String, TriggerState) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Fires `name`; returns its new state, or nil when there is no such trigger.
    @discardableResult
    public func fire(_ name: String) -> TriggerState? {
        guard let trigger = triggers.withLock({ $0[name] }) else { return nil }
        guard trigger.state != .disabled else { return .disabled }
        let state = trigger.action()
        triggers.withLock { $0[name]?.state = state }
        for listener in listeners.withLock({ $0 }) { listener(name, state) }
        return state
    }

    /// Sets `name`'s state without firing it (a recorder whose disk filled up, a client's own
    /// trigger); listeners hear of a change. False when there is no such trigger.
    @discardableResult
    public func setState(_ name: String, _ state: TriggerState) -> Bool {
        let old: TriggerState? = triggers.withLock { table in
            guard let old = table[name]?.state else { return nil }
            table[name]?.state = state
            return old
        }
        guard let old else { return false }
        if old != state { for listener in listeners.withLock({ $0 }) { listener(name, state) } }
        return true
    }

    /// The state of `name`, or nil when there is no such trigger.
    public func state(_ name: String) -> TriggerState? { triggers.withLock { $0[name]?.state } }

    /// Every trigger, by name.
    public var all: [Trigger] { triggers.withLock { $0.values.sorted { $0.name < $1.name } } }
}
