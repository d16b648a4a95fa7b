import StageboxPortRules

/// What a trigger may be called: the built-in ones by their own names, a client's as
/// `client.trigger` (like its ports), so a name in the configuration tells which kind it means.
public enum TriggerRules {
    /// The triggers Stagebox always has (the appliance registers each; `ApplianceTests` checks
    /// that the two lists agree, so a button can name every one of them).
    public static let builtin: [String] = ["record", "mute", "mute-out", "play", "marker", "copy-takes", "update"]

    /// The built-in triggers that only show a state (on an LED): firing them does nothing.
    public static let shownOnly: [String] = ["update"]

    /// A trigger name a button, an LED, the console or the bus may refer to: a built-in one, or
    /// `client.trigger` (which need not exist yet: a client makes it when it connects).
    /// `fired`: the name is one to fire (a button's, a MIDI control's), not only to show.
    public static func checkReference(_ name: String, fired: Bool = true) throws(TriggerRuleViolation) {
        if fired && shownOnly.contains(name) { throw .onlyShown(name) }
        if builtin.contains(name) { return }
        guard name.contains(".") else { throw .unknownTrigger(name) }
        let client = String(name.prefix { $0 != "." })
        let trigger = String(name.dropFirst(client.count + 1))
        do throws(PortRuleViolation) {
            try PortRules.checkClientName(client)
        } catch {
            throw .clientName(error)
        }
        do throws(PortRuleViolation) {
            try PortRules.checkClientPortName(trigger, client: client)
        } catch {
            throw .invalidTriggerName(name)
        }
    }

    /// The most triggers one client may make: enough for a call app's mute, camera, hand and
    /// leave buttons several times over, few enough that a runaway client cannot fill the
    /// console's and the clients' trigger lists.
    public static let maxPerClient = 16

    /// The longest trigger title, in bytes (UTF-8): a line on the console, a label on a screen.
    public static let maxTitleLength = 64

    /// A trigger a client makes: `trigger` is its own name (no `.`), the bus names it
    /// `client.trigger` like the client's ports.
    public static func checkClientTriggerName(_ trigger: String, client: String) throws(TriggerRuleViolation) {
        do throws(PortRuleViolation) {
            try PortRules.checkClientPortName(trigger, client: client)
        } catch {
            throw .invalidTriggerName("\(client).\(trigger)")
        }
    }

    /// A trigger's title: at most `maxTitleLength` bytes, no control characters (it is shown on
    /// one line). Empty means the trigger's name is shown instead.
    public static func checkTitle(_ title: String, trigger: String) throws(TriggerRuleViolation) {
        guard title.utf8.count <= maxTitleLength else { throw .invalidTriggerTitle(trigger: trigger, title) }
        guard !title.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidTriggerTitle(trigger: trigger, title)
        }
    }
}
