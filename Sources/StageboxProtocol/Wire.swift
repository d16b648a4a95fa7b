/// Why bytes from the other side of the bus socket were refused.
public enum ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(needed: Int, had: Int)
    case oversized(length: Int, limit: Int)
    case unknownMessageType(UInt16)
    case invalidValue(String)
    case trailingBytes(Int)

    public var description: String {
        switch self {
        case let .truncated(needed, had): return "message truncated: needed \(needed) more bytes, had \(had)"
        case let .oversized(length, limit): return "message of \(length) bytes is larger than the limit of \(limit)"
        case .unknownMessageType(let t): return "unknown message type \(t)"
        case .invalidValue(let what): return "invalid value: \(what)"
        case .trailingBytes(let n): return "\(n) unexpected bytes at the end of a message"
        }
    }
}

/// Appends little-endian values to a byte array.
public struct WireWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
    public mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
    public mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }

    /// The most bytes of a string and of a long text.
    public static let stringBytes = 1024
    public static let longBytes = 60_000

    /// A longer text (a console answer): u32 byte count, then UTF-8 (at most 60 000 bytes). A
    /// longer one keeps its last lines, the newest of a log, after a line that says so.
    public mutating func long(_ s: String) {
        var utf8 = Array(s.utf8)
        if utf8.count > Self.longBytes {
            let note = Array("(the first lines left out: an answer holds at most \(Self.longBytes) bytes)\n".utf8)
            var start = utf8.count - (Self.longBytes - note.count)
            while start < utf8.count && utf8[start - 1] != 0x0A { start += 1 } // a whole line
            if start == utf8.count { start = utf8.count - (Self.longBytes - note.count) } // one long line
            while start < utf8.count && utf8[start] & 0xC0 == 0x80 { start += 1 } // a whole character
            utf8 = note + utf8[start...]
        }
        u32(UInt32(utf8.count))
        bytes += utf8
    }

    /// A string: u16 byte count, then UTF-8 (at most 1024 bytes, cut before a character that
    /// would not fit whole).
    public mutating func string(_ s: String) {
        let all = Array(s.utf8)
        var end = min(all.count, Self.stringBytes)
        // A continuation byte right after the cut: the character across it goes whole.
        while end > 0 && end < all.count && all[end] & 0xC0 == 0x80 { end -= 1 }
        u16(UInt16(end))
        bytes += all[..<end]
    }
}

/// Reads little-endian values from a byte slice, refusing to read past its end.
public struct WireReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.offset = bytes.startIndex
    }

    public var remaining: Int { bytes.endIndex - offset }

    private mutating func take(_ n: Int) throws(ProtocolError) -> ArraySlice<UInt8> {
        guard remaining >= n else { throw .truncated(needed: n, had: remaining) }
        defer { offset += n }
        return bytes[offset..<(offset + n)]
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(ProtocolError) -> T {
        let slice = try take(MemoryLayout<T>.size)
        var v: T = 0
        for (i, b) in slice.enumerated() { v |= T(b) << (8 * i) }
        return v
    }

    public mutating func u8() throws(ProtocolError) -> UInt8 { try integer(UInt8.self) }
    public mutating func u16() throws(ProtocolError) -> UInt16 { try integer(UInt16.self) }
    public mutating func u32() throws(ProtocolError) -> UInt32 { try integer(UInt32.self) }

    public mutating func bool() throws(ProtocolError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let b: throw .invalidValue("boolean \(b)")
        }
    }

    public mutating func string() throws(ProtocolError) -> String {
        let n = Int(try u16())
        guard n <= WireWriter.stringBytes else { throw .invalidValue("string of \(n) bytes (at most \(WireWriter.stringBytes))") }
        let raw = try take(n)
        guard let s = String(validating: raw, as: UTF8.self) else { throw .invalidValue("string is not UTF-8") }
        guard !s.utf8.contains(0) else { throw .invalidValue("string contains NUL") }
        return s
    }

    public mutating func long() throws(ProtocolError) -> String {
        let n = Int(try u32())
        guard n <= WireWriter.longBytes else { throw .invalidValue("text of \(n) bytes (at most \(WireWriter.longBytes))") }
        let raw = try take(n)
        guard let s = String(validating: raw, as: UTF8.self) else { throw .invalidValue("text is not UTF-8") }
        return s
    }

    /// A count of items that follow, each at least `minimumSize` bytes: refuses counts the
    /// remaining bytes cannot hold, before anything is allocated for them.
    public mutating func count(minimumSize: Int) throws(ProtocolError) -> Int {
        let n = Int(try u32())
        guard n <= remaining / max(1, minimumSize) else { throw .truncated(needed: n * minimumSize, had: remaining) }
        return n
    }

    public func finish() throws(ProtocolError) {
        if remaining != 0 { throw .trailingBytes(remaining) }
    }
}
