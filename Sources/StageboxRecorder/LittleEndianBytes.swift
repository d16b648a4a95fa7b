/// Building and patching RIFF headers: little-endian numbers and four-character codes.
struct LittleEndianBytes {
    var bytes: [UInt8] = []

    mutating func fourCC(_ code: StaticString) {
        code.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func u16(_ v: UInt16) { append(UInt64(v), count: 2) }
    mutating func u32(_ v: UInt32) { append(UInt64(v), count: 4) }
    mutating func u64(_ v: UInt64) { append(v, count: 8) }

    /// `text` as ASCII in a field of exactly `width` bytes, cut or padded with NULs.
    mutating func text(_ text: String, width: Int) {
        let ascii = text.utf8.prefix(width).map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }
        bytes.append(contentsOf: ascii)
        bytes.append(contentsOf: repeatElement(0, count: width - ascii.count))
    }

    mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    private mutating func append(_ v: UInt64, count: Int) {
        for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    /// Overwrites `count` bytes at `offset` with `v`, little-endian.
    static func patch(_ buffer: inout [UInt8], at offset: Int, _ v: UInt64, count: Int) {
        for i in 0..<count { buffer[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
    }

    static func read(_ buffer: [UInt8], at offset: Int, count: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in (0..<count).reversed() { v = v << 8 | UInt64(buffer[offset + i]) }
        return v
    }

    static func fourCC(_ buffer: [UInt8], at offset: Int) -> String {
        String(decoding: buffer[offset..<offset + 4], as: UTF8.self)
    }
}
