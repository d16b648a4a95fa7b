import StageboxTriggers
/// One button: where it is wired, how, and which triggers it fires.
public struct ButtonSettings: Sendable, Equatable {
    /// For the logs and the console.
    public var name: String
    /// A chip name (`gpiochip0`), path, label or number.
    public var chip: String
    public var line: Int
    /// A button to ground with a pull-up reads low when pressed.
    public var activeLow: Bool
    public var bias: GPIOBias
    public var debounceNanos: Int64
    /// The triggers fired on a press, a release and a long press; nil: none.
    public var press: String?
    public var release: String?
    public var longPress: String?
    public var longPressNanos: Int64

    public init(name: String, chip: String, line: Int, activeLow: Bool = true, bias: GPIOBias = .pullUp,
                debounceNanos: Int64 = 20_000_000, press: String? = nil, release: String? = nil,
                longPress: String? = nil, longPressNanos: Int64 = 600_000_000) {
        self.name = name
        self.chip = chip
        self.line = line
        self.activeLow = activeLow
        self.bias = bias
        self.debounceNanos = debounceNanos
        self.press = press
        self.release = release
        self.longPress = longPress
        self.longPressNanos = longPressNanos
    }

    /// The trigger `event` fires, if any.
    public func trigger(for event: ButtonEvent) -> String? {
        switch event {
        case .press: press
        case .release: release
        case .longPress: longPress
        }
    }

    /// A fresh debouncer for this button whose line reads `pressed` at `now`.
    public func machine(pressed: Bool, now: Int64) -> ButtonMachine {
        ButtonMachine(debounceNanos: debounceNanos, longPressNanos: longPress == nil ? nil : longPressNanos,
                      pressed: pressed, now: now)
    }
}
