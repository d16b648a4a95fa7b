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

    /// Every state with its number, for messages: `0 normal, 1 selected, …`.
    public static var numbered: String { allCases.map { "\($0.rawValue) \($0.name)" }.joined(separator: ", ") }
}
