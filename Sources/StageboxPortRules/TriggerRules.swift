/// What a trigger may be called: the built-in ones by their own names, a client's as
/// `client.trigger` (like its ports), so a name in the configuration tells which kind it means.
public enum TriggerRules {
    /// The triggers Stagebox always has.
    public static let builtin: [String] = ["record", "mute", "mute-out", "play", "marker"]

    /// A trigger name a button, the console or the bus may refer to: a built-in one, or
    /// `client.trigger` (which need not exist yet: a client makes it when it connects).
    public static func checkReference(_ name: String) throws(PortRuleViolation) {
        if builtin.contains(name) { return }
        guard name.contains(".") else { throw .unknownTrigger(name) }
        let client = String(name.prefix { $0 != "." })
        let trigger = String(name.dropFirst(client.count + 1))
        try PortRules.checkClientName(client)
        do throws(PortRuleViolation) {
            try PortRules.checkClientPortName(trigger, client: client)
        } catch {
            throw .invalidTriggerName(name)
        }
    }
}
