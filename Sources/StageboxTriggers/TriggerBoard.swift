import Synchronization

/// What firing a trigger did.
public enum FireOutcome: Sendable, Equatable {
    /// The trigger fired; its state is now this.
    case fired(TriggerState)
    /// The trigger's own action ran and failed: its state is now `.error`, and the action
    /// logged why (a client's trigger only ever `fired`: its client sets its state).
    case failed
    /// The trigger is disabled: nothing was done.
    case disabled
    /// There is no trigger of that name (a button mapped to a client's trigger that is not there).
    case missing
}

/// Named actions that buttons, clients and the console can fire.
///
/// A trigger has a state (shown by an LED, sent to clients) and an action run on the thread
/// that fires it. A built-in trigger's action returns the new state; a client's trigger only
/// tells its client, which sets the new state itself (`setState`), as in Audiobus.
///
/// Listeners: `onChange` hears every fire of a built-in trigger and every state change;
/// `onRemove` hears a trigger leave (a client that left took its triggers with it). A trigger
/// that is removed is not first changed to `.disabled`: listeners that show it stop showing it.
public final class TriggerBoard: Sendable {
    public struct Trigger: Sendable {
        public var name: String
        public var title: String
        public var state: TriggerState
        /// Returns the new state, or nil to keep the state as it is (a client's trigger).
        let action: @Sendable () -> TriggerState?
    }

    private let triggers = Mutex<[String: Trigger]>([:])
    private let listeners = Mutex<[@Sendable (String, TriggerState) -> Void]>([])
    private let removalListeners = Mutex<[@Sendable (String) -> Void]>([])

    public init() {}

    /// Adds a trigger; `action` runs when it fires and returns the trigger's new state.
    public func add(name: String, title: String, state: TriggerState = .normal,
                    action: @escaping @Sendable () -> TriggerState) {
        triggers.withLock { $0[name] = Trigger(name: name, title: title, state: state, action: { action() }) }
    }

    /// Adds a trigger whose firing leaves its state alone: `onFire` is told, and the trigger's
    /// owner sets the new state with `setState` (a client's trigger). Firing it does not call the
    /// `onChange` listeners, since nothing changed. False when a trigger of that name exists.
    @discardableResult
    public func addKeepingState(name: String, title: String, state: TriggerState = .normal,
                                onFire: @escaping @Sendable () -> Void) -> Bool {
        triggers.withLock { table in
            guard table[name] == nil else { return false }
            table[name] = Trigger(name: name, title: title, state: state, action: { onFire(); return nil })
            return true
        }
    }

    /// Removes `name`; the `onRemove` listeners hear of it. False when there is no such trigger.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        guard triggers.withLock({ $0.removeValue(forKey: name) }) != nil else { return false }
        for listener in removalListeners.withLock({ $0 }) { listener(name) }
        return true
    }

    /// Calls `listener` after every state change, with the trigger's name and new state.
    public func onChange(_ listener: @escaping @Sendable (String, TriggerState) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Calls `listener` with the name of every trigger removed.
    public func onRemove(_ listener: @escaping @Sendable (String) -> Void) {
        removalListeners.withLock { $0.append(listener) }
    }

    /// Fires `name`; returns its new state, `.disabled` when it is disabled (nothing is done),
    /// or nil when there is no such trigger.
    @discardableResult
    public func fire(_ name: String) -> TriggerState? {
        switch fireReporting(name) {
        case .fired(let state): state
        case .failed: .error
        case .disabled: .disabled
        case .missing: nil
        }
    }

    /// Fires `name` and says what that did: a disabled trigger does nothing, and this tells
    /// that apart from an action that disabled its own trigger.
    public func fireReporting(_ name: String) -> FireOutcome {
        guard let trigger = triggers.withLock({ $0[name] }) else { return .missing }
        guard trigger.state != .disabled else { return .disabled }
        guard let state = trigger.action() else { return .fired(trigger.state) }
        // The action may have set the new state already through `setState` (a mute trigger
        // whose port's mute is announced back to it): the listeners heard that change then, and
        // do not hear it twice (a MIDI controller would be sent the same note again).
        let announced = triggers.withLock { table -> Bool in
            let now = table[name]?.state
            table[name]?.state = state
            return now == state && now != trigger.state
        }
        if !announced { for listener in listeners.withLock({ $0 }) { listener(name, state) } }
        return state == .error ? .failed : .fired(state)
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
