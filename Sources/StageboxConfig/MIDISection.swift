/// `[midi]`: the ALSA sequencer client "Stagebox", which MIDI peers it connects, and
/// `[[midi.map]]`: notes and controllers that fire triggers and show their states.
public struct MIDISection: Sendable, Equatable {
    public var connect: MIDIConnectSetting = .all
    public var maps: [MIDIMapEntry] = []

    public init(connect: MIDIConnectSetting = .all, maps: [MIDIMapEntry] = []) {
        self.connect = connect
        self.maps = maps
    }
}

/// `[midi] connect`: which MIDI clients are connected as they appear.
public enum MIDIConnectSetting: Sendable, Equatable {
    /// Every client but the system's, Stagebox's own and "Midi Through".
    case all
    /// None: peers are connected by hand (aconnect).
    case none
    /// Clients whose name is one of these or begins with one.
    case clients([String])
}

/// `[[midi.map]]`: a note or a controller on a channel, and the triggers it fires.
public struct MIDIMapEntry: Sendable, Equatable {
    /// Exactly one of `note` and `cc` is set (0–127).
    public var note: Int?
    public var cc: Int?
    /// 1–16; nil: any channel.
    public var channel: Int?
    /// Triggers fired on a press, a release and a long press; empty: none.
    public var press = ""
    public var release = ""
    public var longPress = ""
    public var longPressMs = ButtonEntry.defaultLongPressMs
    /// Where the entry stands in its file, and which `[[midi.map]]` it is (from 1).
    public var sourceLine: Int
    public var number: Int

    public init(note: Int? = nil, cc: Int? = nil, channel: Int? = nil, sourceLine: Int = 0, number: Int = 0) {
        self.note = note
        self.cc = cc
        self.channel = channel
        self.sourceLine = sourceLine
        self.number = number
    }

    public static let valueRange = 0...127
    public static let channelRange = 1...16
}
