import StageboxProtocol
/// The whole configuration of a Stagebox, as read from `stagebox.toml`.
public struct StageboxConfiguration: Sendable, Equatable {
    public var audio = AudioSection()
    public var tone = ToneSection()
    public var bus = BusSection()
    public var console = ConsoleSection()
    public var watchdog = WatchdogSection()
    public var health = HealthSection()
    public var clock = ClockSection()
    public var lifecycle = LifecycleSection()
    public var recorder = RecorderSection()
    public var connections: [ConnectEntry] = [ConnectEntry(from: "codec.in", to: "codec.out")]
    public var buttons: [ButtonEntry] = []
    public var leds: [LEDEntry] = []
    /// `[midi]` and `[[midi.map]]`; nil when the file has neither (no sequencer is opened).
    public var midi: MIDISection?
    /// `[state]`: where run-time changes are kept across reboots; nil when the file has none.
    public var state: StateSection?

    public init() {}

    /// The built-in defaults: a HiFiBerry DAC+ADC at 48 kHz, 64 × 2, inputs to outputs.
    public static let defaults = StageboxConfiguration()
}

/// `[audio]`: the codec.
public struct AudioSection: Sendable, Equatable {
    /// The sample rates the engine runs at.
    public static let rateRange = 8000...192_000
    public var capture = "hw:CARD=sndrpihifiberry,DEV=0"
    public var playback = "hw:CARD=sndrpihifiberry,DEV=0"
    public var rate = 48000
    /// One of `AudioSection.formats`.
    public var format = "S32_LE"
    public var inputs = 2
    public var outputs = 2
    public var period = 64
    public var periods = 2
    public var rtPriority = 70

    public init() {}

    /// The sample formats a codec may use.
    public static let formats = ["S16_LE", "S24_LE", "S24_3LE", "S32_LE", "FLOAT_LE"]

    /// The buffer latency one way, in milliseconds.
    public var bufferMilliseconds: Double { Double(period * periods) * 1000 / Double(rate) }
}

/// `[tone]`: the built-in test signal.
public struct ToneSection: Sendable, Equatable {
    /// `sine`, `noise` or `silence`.
    public var signal = "sine"
    public var frequency = 1000.0
    public var levelDB = -20.0

    public init() {}

    public static let signals = ["sine", "noise", "silence"]
}

/// `[bus]`: the socket where client programs connect.
public struct BusSection: Sendable, Equatable {
    /// The built-in default follows `DefaultSocket` (and `$STAGEBOX_SOCKET` overrides the file).
    public var socket = DefaultSocket.path
    public var maxClients = 32
    public var maxPortsPerClient = 16
    /// How long the audio thread waits for a filter client, in percent of the period.
    public var filterDeadlinePercent = 25

    public init() {}
}

/// `[console]`: the diagnostics shell.
public struct ConsoleSection: Sendable, Equatable {
    /// A serial device, `stdio`, or `none`.
    public var device = "/dev/serial0"
    public var baud = 115_200
    /// Whether the file set the device (else `--simulate` on a terminal uses stdio).
    public var deviceGiven = false

    public init() {}

    public static let baudRates = [9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600]
}

/// `[watchdog]`: the hardware watchdog that resets a board whose audio loop stopped.
/// `[clock]`: where the wall clock's last known time is kept across power cuts, and the RTC.
public struct ClockSection: Sendable, Equatable {
    /// An absolute path ("" keeps none): the card sets /data/stagebox-clock.
    public var file = ""
    /// How often the time is saved while running (and always at a clean stop and a take's start).
    public var saveInterval = 600
    public static let saveIntervalRange = 10...86400
    /// A battery-backed RTC chip on I2C to read the time from at start ("" for none): one the
    /// kernel's rtc-ds1307 driver knows, at its fixed address (`rtcAddresses`).
    public var rtc = ""
    /// The I2C bus it is on: 1 is the Pi's GPIO 2 and 3 (pins 3 and 5).
    public var rtcBus = 1
    public static let rtcBusRange = 0...31
    /// The chips rtc-ds1307 drives, with their I2C addresses.
    public static let rtcAddresses: [(chip: String, address: Int)] = [
        ("ds1307", 0x68), ("ds1337", 0x68), ("ds1338", 0x68), ("ds1339", 0x68), ("ds1340", 0x68),
        ("ds3231", 0x68), ("mcp7940x", 0x6f),
    ]

    public init() {}
}

/// `[health]`: when the board's temperature is worth a warning.
public struct HealthSection: Sendable, Equatable {
    /// The SoC temperature (°C) at which the log warns; a Pi's firmware throttles from 80.
    public var warnTemperature = 80.0
    public static let warnTemperatureRange = 40.0...110.0

    public init() {}
}

public struct WatchdogSection: Sendable, Equatable {
    /// A watchdog device such as `/dev/watchdog`, or `none`.
    public var device = "none"
    /// Seconds without progress before the board resets.
    public var timeout = 15

    public init() {}
}

/// `[lifecycle]`: when the codec is suspended and how it fades.
public struct LifecycleSection: Sendable, Equatable {
    /// Seconds not in use (no client port, no take) before the codec is suspended; 0 = never.
    /// The default keeps an appliance's codec running: a board config opts in.
    public var suspendAfter = 0.0
    /// The fade-in at every start and the fade-out before every suspend and stop, in ms
    /// (0: none, for measurements that compare the outputs bit for bit from the first frame).
    public var fadeMs = 20.0

    public init() {}

    public static let suspendAfterRange = 0.0...86_400.0
    public static let fadeRange = 0.0...1000.0
}

/// `[[connect]]`: a connection made at start.
public struct ConnectEntry: Sendable, Equatable {
    public var from: String
    public var to: String
    /// Where the entry stands in its file (0 for the built-in default), for error messages.
    public var line: Int
    /// Which `[[connect]]` of the file it is, from 1 (0 for the built-in default): entries with
    /// problems are left out of `connections`, so its place there does not tell.
    public var number: Int

    public init(from: String, to: String, line: Int = 0, number: Int = 0) {
        self.from = from
        self.to = to
        self.line = line
        self.number = number
    }
}

/// `[recorder]`: where takes go and how they are written.
public struct RecorderSection: Sendable, Equatable {
    /// Must exist up to its parent: Stagebox makes the last component, never more (a `/data`
    /// that did not mount must not become a directory on the root filesystem).
    public var directory = "/data/recordings"
    /// Sender or filter ports; a take is one WAV for each.
    public var sources = ["codec.in"]
    /// One of `RecorderSection.encodings`.
    public var encoding = "PCM_24"
    public var syncIntervalMs = 1000
    public var preRollSeconds = 0.0
    public var minFreeMB = 64
    /// Where each take is copied as it is recorded: "" nowhere, "usb" the first USB stick
    /// mounted under /media, or a directory on another medium.
    public var mirror = ""
    /// Whether Stagebox mounts USB sticks itself when they are plugged (under /media, as root):
    /// on the card, where nothing else does; off where the system mounts them.
    public var mountSticks = false
    /// The slate's start (each take's iXML): the production, the first scene, the day's roll.
    public var project = ""
    public var scene = ""
    public var tape = ""

    public init() {}

    public static let encodings = ["PCM_16", "PCM_24", "PCM_32", "FLOAT"]
    public static let syncIntervalRange = 100...10_000
    public static let preRollRange = 0.0...30.0
    public static let minFreeRange = 0...1_000_000
}
/// `[[button]]`: a push button on a GPIO line that fires triggers.
public struct ButtonEntry: Sendable, Equatable {
    /// For the logs and the console; `button N` when the file gives none.
    public var name: String
    /// A chip name (`gpiochip0`), path, label or number.
    public var chip = "gpiochip0"
    public var line = 0
    /// `low` (a button to ground with a pull-up) or `high`.
    public var active = "low"
    /// One of `ButtonEntry.biases`.
    public var bias = "pull-up"
    public var debounceMs = 20
    /// Triggers fired on a press, a release, a long press; empty: none.
    public var press = ""
    public var release = ""
    public var longPress = ""
    public var longPressMs = ButtonEntry.defaultLongPressMs
    /// Where the entry stands in its file, and which `[[button]]` it is (from 1).
    public var sourceLine: Int
    public var number: Int

    public init(name: String, sourceLine: Int = 0, number: Int = 0) {
        self.name = name
        self.sourceLine = sourceLine
        self.number = number
    }

    public static let levels = ["low", "high"]
    public static let biases = ["pull-up", "pull-down", "disable", "as-is"]
    public static let debounceRange = 0...1000
    public static let longPressRange = 100...10_000
    public static let defaultLongPressMs = 600
}

/// `[[led]]`: an LED on a GPIO line that shows a trigger's state.
public struct LEDEntry: Sendable, Equatable {
    public var chip = "gpiochip0"
    public var line = 0
    /// `high` (lit by driving the line high) or `low`.
    public var active = "high"
    public var trigger = ""
    /// Where the entry stands in its file, and which `[[led]]` it is (from 1).
    public var sourceLine: Int
    public var number: Int

    public init(trigger: String, sourceLine: Int = 0, number: Int = 0) {
        self.trigger = trigger
        self.sourceLine = sourceLine
        self.number = number
    }
}

/// GPIO line offsets a button or LED may name.
public let gpioLineRange = 0...1023

/// `[state]`: the run-time changes (connections, mutes) kept across reboots.
public struct StateSection: Sendable, Equatable {
    /// An absolute path; its folder must exist (a `/data` that did not mount is not made).
    public var file = ""
    /// Whether the start restores it on top of the configuration (false: it is only written).
    public var restore = true
    /// How long after a change it is written: a burst of changes is one write.
    public var writeDelayMs = 500
    public static let writeDelayRange = 0...60_000

    public init() {}
}
