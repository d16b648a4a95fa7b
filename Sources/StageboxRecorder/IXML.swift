/// A take's iXML chunk (the field recorders' metadata, iXML 1.61): project, scene, take, tape,
/// note, a name for each channel, and the first sample's place on the day's timeline, as a
/// production sound person's tools (and editors that conform a film's sound) read it.
public struct IXML: Sendable, Equatable {
    public var project: String
    public var scene: String
    public var take: Int
    public var tape: String
    public var note: String
    public var trackNames: [String]
    /// Samples since local midnight of the first sample, at `sampleRate` (as in `bext`).
    public var timeReference: UInt64
    public var sampleRate: Int

    /// The chunk's fixed size: the header's layout never moves (spaces fill the room the XML
    /// leaves; XML allows them after the document). A note too long for it is cut.
    public static let chunkBytes = 2048

    public init(project: String, scene: String, take: Int, tape: String, note: String, trackNames: [String],
                timeReference: UInt64, sampleRate: Int) {
        self.project = project
        self.scene = scene
        self.take = take
        self.tape = tape
        self.note = note
        self.trackNames = trackNames
        self.timeReference = timeReference
        self.sampleRate = sampleRate
    }

    public var xml: String { document(note: note) }

    private func document(note: String) -> String {
        let tracks = trackNames.enumerated().map { i, name in
            "<TRACK><CHANNEL_INDEX>\(i + 1)</CHANNEL_INDEX><INTERLEAVE_INDEX>\(i + 1)</INTERLEAVE_INDEX><NAME>\(Self.escape(name))</NAME></TRACK>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <BWFXML>
            <IXML_VERSION>1.61</IXML_VERSION>
            <PROJECT>\(Self.escape(project))</PROJECT>
            <SCENE>\(Self.escape(scene))</SCENE>
            <TAKE>\(take)</TAKE>
            <TAPE>\(Self.escape(tape))</TAPE>
            <NOTE>\(Self.escape(note))</NOTE>
            <SPEED>
            <FILE_SAMPLE_RATE>\(sampleRate)</FILE_SAMPLE_RATE>
            <TIMESTAMP_SAMPLE_RATE>\(sampleRate)</TIMESTAMP_SAMPLE_RATE>
            <TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>\(timeReference >> 32)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>
            <TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>\(timeReference & 0xFFFF_FFFF)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>
            </SPEED>
            <TRACK_LIST>
            <TRACK_COUNT>\(trackNames.count)</TRACK_COUNT>
            \(tracks.joined(separator: "\n"))
            </TRACK_LIST>
            </BWFXML>

            """
    }

    /// The chunk's body: the document, then spaces up to `chunkBytes` (the note cut first,
    /// then the track names, until it fits).
    func chunkBody() -> [UInt8] {
        var note = note
        var text = Array(document(note: note).utf8)
        while text.count > Self.chunkBytes && !note.isEmpty {
            note = String(note.dropLast(max(1, note.count / 4)))
            text = Array(document(note: note + "…").utf8)
        }
        // Then the other fields, the scene last: the chunk keeps its size whatever they hold.
        for scene in [scene, ""] where text.count > Self.chunkBytes {
            text = Array(IXML(project: "", scene: scene, take: take, tape: "", note: "", trackNames: [],
                              timeReference: timeReference, sampleRate: sampleRate).xml.utf8)
        }
        return text + [UInt8](repeating: 0x20, count: max(0, Self.chunkBytes - text.count))
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                // XML 1.0 has no place for control characters other than tab and line ends.
                if let a = c.asciiValue, a < 0x20, a != 0x09, a != 0x0A, a != 0x0D { continue }
                out.append(c)
            }
        }
        return out
    }
}
