import Atomics
import CLinux
import StageboxSystem
import StageboxPortRules
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A single-producer single-consumer ring of interleaved Float32 frames in shared memory
/// (a memfd mapped by the server and by one client), with a frame timestamp per block.
///
/// Positions are frame counters that only grow; the data index is `position % capacity`.
/// Neither side ever blocks. The producer may drop the oldest frames when the ring is full
/// (it moves the read position on with a compare-and-swap); the consumer notices and retries.
///
/// **The other side is not trusted.** Both sides map the whole ring read-write, so every word
/// of the header may hold anything. Each side therefore keeps its own positions (the ones it
/// moves) in private memory, never reads them back from the header, and checks the ones the
/// other side moves against them before use: a position that goes backwards, a read position
/// past the write position, or more frames waiting than the ring holds is a `RingFault`, after
/// which the ring is dead for this side (it reads nothing, writes nothing). No arithmetic on a
/// shared value can trap, and every loop over shared state is bounded.
///
/// `@unchecked Sendable`: the producer state is touched only by the one producing thread and the
/// consumer state only by the one consuming thread; everything shared goes through atomics or
/// seqlocks in the mapping, and reports read only atomics.
public final class SharedRing: @unchecked Sendable {
    public static let magic: UInt32 = 0x5342_5231 // "SBR1"

    public let channels: Int
    /// Frames the ring holds.
    public let capacity: Int
    /// The memfd, this ring's own: closed with the ring.
    public let fileDescriptor: FileDescriptor
    let base: UnsafeMutableRawPointer
    private let mappedSize: Int
    let data: UnsafeMutablePointer<Float>
    let writePosition: UnsafeAtomic<UInt64>
    let readPosition: UnsafeAtomic<UInt64>
    let underrunCount: UnsafeAtomic<UInt64>
    let overrunCount: UnsafeAtomic<UInt64>
    let ratioBits: UnsafeAtomic<UInt64>
    let timestampWrites: UnsafeAtomic<UInt64>
    let startThresholdFrames: UnsafeAtomic<UInt64>
    let namesGeneration: UnsafeAtomic<UInt64>
    let wakeThresholdFrames: UnsafeAtomic<UInt64>
    let clockGeneration: UnsafeAtomic<UInt64>
    let clockFrame: UnsafeAtomic<UInt64>
    let clockNanos: UnsafeAtomic<UInt64>
    let targetFillFrames: UnsafeAtomic<UInt64>
    let endPosition: UnsafeAtomic<UInt64>

    // Producer-private: where this side has written to, and the last read position it saw.
    var produced: UInt64 = 0
    var lastReadSeen: UInt64 = 0
    var stampsWritten: UInt64 = 0
    // Consumer-private: where this side has read to, and the last write position it saw.
    var consumed: UInt64 = 0
    var lastWriteSeen: UInt64 = 0
    /// The first fault this side found (0 = none), for whoever watches the ring.
    let faultCode = Atomic<UInt8>(0)

    /// A block's place on the codec clock.
    public struct Timestamp: Sendable, Equatable {
        /// The ring position of the block's first frame.
        public var ringPosition: UInt64
        /// The frame position on the codec clock of the block's first frame.
        public var codecFrame: Int64
        /// The monotonic time of that frame, in nanoseconds.
        public var hostNanos: Int64

        public init(ringPosition: UInt64, codecFrame: Int64, hostNanos: Int64) {
            self.ringPosition = ringPosition
            self.codecFrame = codecFrame
            self.hostNanos = hostNanos
        }
    }

    public static func byteSize(channels: Int, capacity: Int) -> Int {
        RingLayout.headerSize + channels * capacity * MemoryLayout<Float>.size
    }

    /// The channel counts and capacities a ring may have.
    public static let channelRange = 1...(PortRules.channelRange.upperBound * RingLayout.sourceSlots)
    public static let capacityRange = 16...(1 << 20)

    /// Creates a new ring in a fresh memfd (the server side).
    public static func create(name: String, channels: Int, capacity: Int) throws(RingError) -> SharedRing {
        guard channelRange.contains(channels), capacityRange.contains(capacity) else {
            throw .invalid("a ring of \(channels) channels and \(capacity) frames is out of range")
        }
        let fd = stagebox_memfd(name)
        guard fd >= 0 else { throw .system(.last("making a memfd for", name)) }
        // Owned until the ring takes it: every way out below closes it.
        let owned = OwnedDescriptor(FileDescriptor(rawValue: fd))
        let size = byteSize(channels: channels, capacity: capacity)
        guard ftruncate(fd, off_t(size)) == 0 else { throw .system(.last("sizing the memfd for", name)) }
        // The client gets this file too: it must not be able to shrink it under our mapping.
        guard stagebox_seal_size(fd) == 0 else { throw .system(.last("sealing the size of the memfd for", name)) }
        guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw .system(.last("mapping the memfd for", name))
        }
        // The pages are made (and, under the appliance's MCL_ONFAULT, locked) here, not by the
        // audio thread's first touch. The file is new and nobody else's yet.
        if !Prefault.populate(p, bytes: size) { Prefault.touch(p.assumingMemoryBound(to: UInt8.self), count: size) }
        p.storeBytes(of: magic, as: UInt32.self)
        p.storeBytes(of: UInt32(channels), toByteOffset: 4, as: UInt32.self)
        p.storeBytes(of: UInt32(capacity), toByteOffset: 8, as: UInt32.self)
        return try adopt(owned, base: p, size: size, channels: channels, capacity: capacity)
    }

    /// Maps a ring received from the other side, checking its header against the file's size.
    /// The sizes are read once, here; the ring never reads them from the header again. On
    /// success the ring takes the descriptor; on failure it stays with `owned` (which closes it).
    public static func map(_ owned: OwnedDescriptor) throws(RingError) -> SharedRing {
        guard let fd = owned.descriptor?.rawValue else { throw .invalid("the ring's descriptor was already taken") }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system(.last("reading the size of a received ring")) }
        let fileSize = Int(st.st_size)
        guard fileSize >= RingLayout.headerSize, fileSize <= 1 << 30 else {
            throw .invalid("shared memory of \(fileSize) bytes is not the size of a ring")
        }
        guard let p = mmap(nil, fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw .system(.last("mapping a received ring"))
        }
        Prefault.populate(p, bytes: fileSize) // mapped in here, not on the audio thread's first touch
        let m = p.load(as: UInt32.self)
        let channels = Int(p.load(fromByteOffset: 4, as: UInt32.self))
        let capacity = Int(p.load(fromByteOffset: 8, as: UInt32.self))
        guard m == magic, channelRange.contains(channels), capacityRange.contains(capacity),
              byteSize(channels: channels, capacity: capacity) <= fileSize else {
            munmap(p, fileSize)
            throw .invalid("not a Stagebox ring (magic \(m), \(channels) channels, \(capacity) frames, \(fileSize) bytes)")
        }
        return try adopt(owned, base: p, size: fileSize, channels: channels, capacity: capacity)
    }

    /// The ring over a mapping, taking the descriptor from `owned`.
    private static func adopt(_ owned: OwnedDescriptor, base: UnsafeMutableRawPointer, size: Int, channels: Int,
                              capacity: Int) throws(RingError) -> SharedRing {
        guard let fd = owned.take() else {
            munmap(base, size)
            throw .invalid("the ring's descriptor was taken while it was being mapped")
        }
        return SharedRing(base: base, size: size, fd: fd, channels: channels, capacity: capacity)
    }

    private init(base: UnsafeMutableRawPointer, size: Int, fd: FileDescriptor, channels: Int, capacity: Int) {
        self.base = base
        self.mappedSize = size
        self.fileDescriptor = fd
        self.channels = channels
        self.capacity = capacity
        func atomic(_ offset: Int) -> UnsafeAtomic<UInt64> {
            UnsafeAtomic(at: (base + offset).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self))
        }
        writePosition = atomic(RingLayout.writePosition)
        readPosition = atomic(RingLayout.readPosition)
        underrunCount = atomic(RingLayout.underruns)
        overrunCount = atomic(RingLayout.overruns)
        ratioBits = atomic(RingLayout.ratio)
        timestampWrites = atomic(RingLayout.timestampWrites)
        startThresholdFrames = atomic(RingLayout.startThreshold)
        namesGeneration = atomic(RingLayout.namesGeneration)
        wakeThresholdFrames = atomic(RingLayout.wakeThreshold)
        clockGeneration = atomic(RingLayout.clockGeneration)
        clockFrame = atomic(RingLayout.clockFrame)
        clockNanos = atomic(RingLayout.clockNanos)
        targetFillFrames = atomic(RingLayout.targetFill)
        endPosition = atomic(RingLayout.endPosition)
        data = (base + RingLayout.headerSize).assumingMemoryBound(to: Float.self)
        // Whatever the other side did before we mapped the ring is where each side starts.
        let w = writePosition.load(ordering: .acquiring), r = readPosition.load(ordering: .acquiring)
        produced = w
        lastWriteSeen = w
        consumed = min(r, w)
        lastReadSeen = min(r, w)
        stampsWritten = timestampWrites.load(ordering: .relaxed)
    }

    deinit {
        munmap(base, mappedSize)
        try? fileDescriptor.close()
    }

    // MARK: Faults

    /// The first fault this side found in the ring, if any. A faulted ring moves no audio.
    public var fault: RingFault? { RingFault(rawValue: faultCode.load(ordering: .relaxed)) }

    func markFault(_ fault: RingFault) {
        _ = faultCode.compareExchange(expected: 0, desired: fault.rawValue, ordering: .relaxed)
    }

    var isFaulted: Bool { faultCode.load(ordering: .relaxed) != 0 }

    // MARK: Reports (either side, any thread)

    /// Frames waiting to be read, as the header says (0 when it makes no sense).
    public var available: Int {
        let w = writePosition.load(ordering: .acquiring)
        let r = readPosition.load(ordering: .acquiring)
        return w >= r ? Int(min(w - r, UInt64(capacity))) : 0
    }

    public var underruns: Int { Self.count(underrunCount.load(ordering: .relaxed)) }
    public var overruns: Int { Self.count(overrunCount.load(ordering: .relaxed)) }

    /// A counter from the header as an Int that cannot trap.
    static func count(_ raw: UInt64) -> Int { Int(min(raw, UInt64(Int.max))) }

    public func countUnderrun() { underrunCount.wrappingIncrement(ordering: .relaxed) }

    /// The ring position the next read starts at (the header's word, as it stands).
    public var readPositionNow: UInt64 { readPosition.load(ordering: .acquiring) }
}

/// What one side found wrong in a ring the other side can write.
public enum RingFault: UInt8, Sendable, CustomStringConvertible {
    case readPositionWentBack = 1
    case writePositionWentBack = 2
    case readPastWrite = 3
    case moreThanCapacity = 4
    case positionOutOfRange = 5

    public var description: String {
        switch self {
        case .readPositionWentBack: return "the read position went backwards"
        case .writePositionWentBack: return "the write position went backwards"
        case .readPastWrite: return "the read position is past the write position"
        case .moreThanCapacity: return "more frames are waiting than the ring holds"
        case .positionOutOfRange: return "a position is out of range"
        }
    }
}

/// Why a ring could not be made or mapped.
public enum RingError: Error, Sendable, Equatable, CustomStringConvertible {
    case system(SystemCallError)
    case invalid(String)

    public var description: String {
        switch self {
        case .system(let error): return error.description
        case .invalid(let why): return why
        }
    }
}
