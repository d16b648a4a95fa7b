import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Touches memory before the audio thread uses it, so that it does not take the first touch's
/// page fault. Under the appliance's `MCL_ONFAULT` a page is locked from its first touch, and a
/// mapping is not filled in when made (`MAP_POPULATE` is ignored for it).
public enum Prefault {
    /// Writes a zero byte into every page of `count` elements' memory at `start`, which is
    /// allocated and not yet initialised (a byte written there is overwritten when it is).
    public static func touch<T>(_ start: UnsafeMutablePointer<T>, count: Int) {
        let bytes = UnsafeMutableRawPointer(start)
        let size = MemoryLayout<T>.stride * count
        var offset = 0
        while offset < size {
            bytes.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
            offset += 4096
        }
        if size > 0 { bytes.storeBytes(of: 0, toByteOffset: size - 1, as: UInt8.self) }
    }

    /// Maps in every page of `bytes` at `start` for writing, without changing what it holds
    /// (memory another process shares, a device's buffer): `MADV_POPULATE_WRITE` (Linux 5.14).
    /// Where that is refused (an older kernel, a read-only or device mapping), it reads a byte
    /// of each page instead. Returns whether the kernel populated the range for writing.
    @discardableResult
    public static func populate(_ start: UnsafeRawPointer, bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        let page = UInt(4096)
        let first = UInt(bitPattern: start) & ~(page - 1)
        let end = UInt(bitPattern: start) + UInt(bytes)
        let populateWrite: Int32 = 23 // MADV_POPULATE_WRITE, not in every libc's headers
        if madvise(UnsafeMutableRawPointer(bitPattern: first), Int(end - first), populateWrite) == 0 { return true }
        var sum: UInt8 = 0
        var address = first
        while address < end {
            sum &+= UnsafeRawPointer(bitPattern: address)!.load(as: UInt8.self)
            address += page
        }
        sink.store(sum, ordering: .relaxed) // keeps the reads from being optimised away
        return false
    }

    private static let sink = Atomic<UInt8>(0)
}
