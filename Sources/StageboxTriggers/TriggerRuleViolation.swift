import StageboxPortRules

/// Why a trigger's name or title breaks the trigger rules; the text every site (configuration,
/// bus server, command line) shows.
public enum TriggerRuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownTrigger(String)
    /// A built-in trigger that only shows a state, named where it would be fired.
    case onlyShown(String)
    case invalidTriggerName(String)
    case invalidTriggerTitle(trigger: String, String)
    /// The client part of `client.trigger` breaks the port rules' client name.
    case clientName(PortRuleViolation)

    public var description: String {
        switch self {
        case .unknownTrigger(let name):
            return "no built-in trigger named '\(name)' (built-in: \(TriggerRules.builtin.joined(separator: ", ")); "
                + "a client's trigger is CLIENT.TRIGGER, like call.mic-mute)"
        case .onlyShown(let name):
            return "the trigger '\(name)' only shows a state on an LED; firing it does nothing"
        case .invalidTriggerName(let name):
            return "invalid trigger name '\(name)' (CLIENT.TRIGGER: letters, digits, '_' and '-' on each side of one '.')"
        case let .invalidTriggerTitle(trigger, title):
            let shown = title.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
            return "invalid title for trigger \(trigger): '\(shown.prefix(80))' (at most \(TriggerRules.maxTitleLength) bytes, "
                + "no control characters)"
        case .clientName(let violation):
            return violation.description
        }
    }
}
