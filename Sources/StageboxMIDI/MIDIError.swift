import CALSA

/// An ALSA sequencer call that failed: what was being done, and alsa-lib's words for why.
public struct MIDIError: Error, Sendable, Equatable, CustomStringConvertible {
    public var what: String
    /// alsa-lib's negative error code.
    public var code: Int32

    public init(_ what: String, code: Int32) {
        self.what = what
        self.code = code
    }

    public var description: String { "\(what): \(String(cString: snd_strerror(code))) (\(code))" }
}
