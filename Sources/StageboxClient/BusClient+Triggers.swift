import StageboxPortRules
import StageboxProtocol
import StageboxTriggers

/// The client's own triggers (Audiobus's custom triggers): made, set and removed here; the
/// refresher thread calls their handlers when they are fired.
extension BusClient {
    /// Makes the trigger `client.name` (at most `TriggerRules.maxPerClient` per client; `title`
    /// at most `TriggerRules.maxTitleLength` bytes, empty for the name). Whenever it is fired
    /// (a button, the console, a client, `stagebox trigger`), `onFire` is called with it on this
    /// client's own event thread (not the connection's reader), where requests may be made: it
    /// may set the trigger's new state. Firing alone leaves the state as it is.
    public func createTrigger(name: String, title: String = "", state: TriggerState = .normal,
                              onFire: @escaping @Sendable (ClientTrigger) -> Void) throws(BusClientError) -> ClientTrigger {
        let full = "\(self.name).\(name)"
        let trigger = ClientTrigger(client: self, name: full, state: state)
        // Known before the server answers, so that a fire right after it is not missed.
        let previous = ownTriggers.withLock { table in
            let old = table[full]
            if old == nil { table[full] = TriggerEntry(trigger: trigger, handler: onFire) }
            return old
        }
        guard previous == nil else { throw .refused(.exists, "trigger \(full) already exists") }
        do throws(BusClientError) {
            _ = try connection.request(.createTrigger(name: name, title: title, state: state.rawValue))
        } catch {
            ownTriggers.withLock { $0[full] = nil }
            throw error
        }
        return trigger
    }

    /// Sets the state of one of this client's triggers (its own name or `client.name`).
    public func setTriggerState(_ name: String, _ state: TriggerState) throws(BusClientError) {
        _ = try connection.request(.setTriggerState(name: name, state: state.rawValue))
    }

    /// Removes one of this client's triggers (its own name or `client.name`).
    public func removeTrigger(_ name: String) throws(BusClientError) {
        let full = name.contains(".") ? name : "\(self.name).\(name)"
        ownTriggers.withLock { $0[full] = nil }
        _ = try connection.request(.removeTrigger(name))
    }

    /// Calls the handlers of the triggers fired since the last call (on the refresher thread).
    func deliverFiredTriggers() {
        for name in firedTriggers.withLock({ let fired = $0; $0 = []; return fired }) {
            guard let entry = ownTriggers.withLock({ $0[name] }), let trigger = entry.trigger else { continue }
            entry.handler(trigger)
        }
    }
}

/// A trigger of this client and its handler; weak, so that releasing the trigger removes it.
struct TriggerEntry {
    weak var trigger: ClientTrigger?
    let handler: @Sendable (ClientTrigger) -> Void
}
