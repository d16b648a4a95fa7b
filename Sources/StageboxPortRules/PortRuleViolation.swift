/// Why a name, a channel count or a `PORT:CHANNEL` text breaks the port rules; the text every
/// site (engine, bus server, configuration) shows.
public enum PortRuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidPortName(String)
    case invalidClientName(String)
    case reservedName(String)
    case channelCount(port: String, Int)
    case invalidEndpoint(String)
    case unknownTrigger(String)
    case invalidTriggerName(String)
    case invalidTriggerTitle(trigger: String, String)

    public var description: String {
        let range = "\(PortRules.channelRange.lowerBound) to \(PortRules.channelRange.upperBound)"
        switch self {
        case .invalidPortName(let name):
            return "invalid port name '\(name)' (letters, digits, '.', '_' and '-', 1 to \(PortRules.maxNameLength) characters)"
        case .invalidClientName(let name):
            return "invalid client name '\(name)' (letters, digits, '_' and '-', no '.', 1 to \(PortRules.maxNameLength) characters)"
        case .reservedName(let name):
            return "'\(name)' is reserved (\(PortRules.reservedNames.joined(separator: ", ")) name stagebox's own ports)"
        case let .channelCount(port, n):
            return "port \(port): \(n) channels is out of range (\(range))"
        case .invalidEndpoint(let text):
            return "'\(text)' is not PORT or PORT:CHANNEL (a channel number from \(range))"
        case .unknownTrigger(let name):
            return "no built-in trigger named '\(name)' (built-in: \(TriggerRules.builtin.joined(separator: ", ")); "
                + "a client's trigger is CLIENT.TRIGGER, like call.mic-mute)"
        case .invalidTriggerName(let name):
            return "invalid trigger name '\(name)' (CLIENT.TRIGGER: letters, digits, '_' and '-' on each side of one '.')"
        case let .invalidTriggerTitle(trigger, title):
            let shown = title.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
            return "invalid title for trigger \(trigger): '\(shown.prefix(80))' (at most \(TriggerRules.maxTitleLength) bytes, "
                + "no control characters)"
        }
    }
}
