import StageboxTriggers

/// One `[[midi.map]]`: a key or controller on a channel (nil: any), and the triggers its press,
/// release and long press fire, as a button's do.
public struct MIDIMapping: Sendable, Equatable {
    public var control: MIDIControl
    /// 1–16; nil: any channel.
    public var channel: Int?
    public var press: String?
    public var release: String?
    public var longPress: String?
    public var longPressNanos: Int64

    public init(control: MIDIControl, channel: Int?, press: String? = nil, release: String? = nil,
                longPress: String? = nil, longPressNanos: Int64 = 600_000_000) {
        self.control = control
        self.channel = channel
        self.press = press
        self.release = release
        self.longPress = longPress
        self.longPressNanos = longPressNanos
    }

    /// Whether `message` is about this key or controller on this channel.
    public func matches(_ message: MIDIMessage) -> Bool {
        message.control == control && (channel == nil || channel == message.channel)
    }

    /// The trigger `event` fires, if any.
    public func trigger(for event: ButtonEvent) -> String? {
        switch event {
        case .press: press
        case .release: release
        case .longPress: longPress
        }
    }

    /// Whether this entry fires `trigger` (and so shows its state).
    public func names(_ trigger: String) -> Bool {
        press == trigger || release == trigger || longPress == trigger
    }

    /// A key or pedal is a button without bounce: a `ButtonMachine` with no debounce gives
    /// press, release and long press as a GPIO button's, and ignores a repeated level.
    func machine() -> ButtonMachine {
        ButtonMachine(debounceNanos: 0, longPressNanos: longPress == nil ? nil : longPressNanos)
    }
}
