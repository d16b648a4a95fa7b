import StageboxPortRules
import StageboxProtocol
import StageboxTriggers

/// Clients' own triggers (Audiobus's custom triggers): a client makes `client.trigger`; whoever
/// fires it (a button, the console, a client, the command line), the client is told and sets
/// the new state itself. Its triggers leave with it.
extension BusServer {
    func createTrigger(name: String, title: String, state raw: UInt8, client: String, session: ClientSession, id: UInt32) {
        let full = "\(client).\(name)"
        do throws(TriggerRuleViolation) {
            try TriggerRules.checkClientTriggerName(name, client: client)
            try TriggerRules.checkTitle(title, trigger: full)
        } catch {
            return reply(session, id, .error(.badRequest, error.description))
        }
        guard let state = TriggerState(rawValue: raw) else {
            return reply(session, id, .error(.badRequest, Self.badState(raw, trigger: full)))
        }
        guard !session.triggers.contains(full) else {
            return reply(session, id, .error(.exists, "trigger \(full) already exists"))
        }
        guard session.triggers.count < TriggerRules.maxPerClient else {
            return reply(session, id, .error(.limit, "\(client) has its maximum of \(TriggerRules.maxPerClient) triggers"))
        }
        let serial = session.serial
        let shownTitle = title.isEmpty ? full : title
        let added = triggers.addKeepingState(name: full, title: shownTitle, state: state) { [weak self] in
            self?.post(.triggerFired(full), toSession: serial)
        }
        guard added else { return reply(session, id, .error(.exists, "trigger \(full) already exists")) }
        session.triggers.insert(full)
        logger.info("bus: \(session.label) made trigger \(full)")
        post(.triggerAdded(name: full, title: shownTitle, state: state.rawValue))
        reply(session, id, .ok)
    }

    func setTriggerState(name: String, state raw: UInt8, client: String, session: ClientSession, id: UInt32) {
        guard let full = ownTrigger(name, client: client, session: session, id: id) else { return }
        guard let state = TriggerState(rawValue: raw) else {
            return reply(session, id, .error(.badRequest, Self.badState(raw, trigger: full)))
        }
        triggers.setState(full, state)
        reply(session, id, .ok)
    }

    func removeTrigger(name: String, client: String, session: ClientSession, id: UInt32) {
        guard let full = ownTrigger(name, client: client, session: session, id: id) else { return }
        triggers.remove(full)
        session.triggers.remove(full)
        reply(session, id, .ok)
    }

    func fireTrigger(_ name: String, session: ClientSession, id: UInt32) {
        if TriggerRules.shownOnly.contains(name) {
            return reply(session, id, .error(.refused, TriggerRuleViolation.onlyShown(name).description))
        }
        switch triggers.fireReporting(name) {
        case .fired: reply(session, id, .ok)
        case .failed: reply(session, id, .error(.refused, "trigger \(name) fired, and its action failed: the log says why"))
        case .disabled: reply(session, id, .error(.triggerDisabled, "trigger \(name) is disabled"))
        case .missing:
            let known = triggers.all.map(\.name).joined(separator: ", ")
            reply(session, id, .error(.noSuchTrigger, "no trigger named \(name) (triggers: \(known))"))
        }
    }

    /// The full name of one of `client`'s triggers, given as its own name or `client.name`; nil
    /// (with the refusal sent) when it is not one.
    private func ownTrigger(_ name: String, client: String, session: ClientSession, id: UInt32) -> String? {
        let full = name.contains(".") ? name : "\(client).\(name)"
        if session.triggers.contains(full) { return full }
        // A built-in trigger has no '.': `mute` is stagebox's, not the client's own `client.mute`.
        if let existing = [full, name].first(where: { triggers.state($0) != nil }) {
            let owner = existing.contains(".") ? String(existing.prefix { $0 != "." }) : "stagebox"
            reply(session, id, .error(.notOwner, "trigger \(existing) belongs to \(owner), not to \(client)"))
        } else {
            reply(session, id, .error(.noSuchTrigger, "\(client) has no trigger named \(full)"))
        }
        return nil
    }

    private static func badState(_ raw: UInt8, trigger: String) -> String {
        "trigger state \(raw) for \(trigger) is out of range (\(TriggerState.numbered))"
    }
}
