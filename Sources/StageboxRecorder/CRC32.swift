/// CRC-32 (IEEE 802.3, the zip and PNG one), to verify a copy read back from its medium. A
/// table and a loop: the firmware links no zlib for this alone.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = ~value
        let table = Self.table
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xff)] ^ (c >> 8) }
        value = ~c
    }
}
