/// The Raspberry Pi firmware's throttle word (the mailbox property GET_THROTTLED, which
/// `raspberrypi-hwmon` polls and Raspberry Pi OS kernels show as `get_throttled`): the low bits
/// say what holds now, the same bits shifted by 16 what happened since boot.
public struct ThrottleFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let underVoltage = ThrottleFlags(rawValue: 1 << 0)
    public static let frequencyCapped = ThrottleFlags(rawValue: 1 << 1)
    public static let throttled = ThrottleFlags(rawValue: 1 << 2)
    public static let softTemperatureLimit = ThrottleFlags(rawValue: 1 << 3)
    public static let underVoltageOccurred = ThrottleFlags(rawValue: 1 << 16)
    public static let frequencyCappedOccurred = ThrottleFlags(rawValue: 1 << 17)
    public static let throttledOccurred = ThrottleFlags(rawValue: 1 << 18)
    public static let softTemperatureLimitOccurred = ThrottleFlags(rawValue: 1 << 19)

    /// The flags that hold now, in words ("under-voltage, throttled"); empty when none.
    public var nowWords: [String] {
        Self.words.filter { contains($0.flag) }.map(\.word)
    }

    /// The flags seen since boot, in words.
    public var sinceBootWords: [String] {
        Self.words.filter { contains(ThrottleFlags(rawValue: $0.flag.rawValue << 16)) }.map(\.word)
    }

    private static let words: [(flag: ThrottleFlags, word: String)] = [
        (.underVoltage, "under-voltage"), (.frequencyCapped, "frequency capped"),
        (.throttled, "throttled"), (.softTemperatureLimit, "soft temperature limit"),
    ]

    /// `get_throttled`'s text: hexadecimal, with or without `0x` ("0x50005", "50005").
    public init?(text: String) {
        var digits = Substring(text.trimmedLine)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard !digits.isEmpty, let value = UInt32(digits, radix: 16) else { return nil }
        self.init(rawValue: value)
    }
}
