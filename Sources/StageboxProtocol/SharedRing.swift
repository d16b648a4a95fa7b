import Atomics
import CLinux

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
public final class SharedRing: @unchecked Sendable {
    public static let magic: UInt32 = 0x5342_5231 // "SBR1"
    static let headerSize = 4096
    static let timestampSlots = 64

    public let channels: Int
    /// Frames the ring holds.
    public let capacity: Int
    public let fileDescriptor: Int32
    private let base: UnsafeMutableRawPointer
    private let mappedSize: Int
    private let data: UnsafeMutablePointer<Float>
    private let writePosition: UnsafeAtomic<UInt64>
    private let readPosition: UnsafeAtomic<UInt64>
    private let underrunCount: UnsafeAtomic<UInt64>
    private let overrunCount: UnsafeAtomic<UInt64>
    private let ratioBits: UnsafeAtomic<UInt64>
    private let timestampWrites: UnsafeAtomic<UInt64>
    private let startThresholdFrames: UnsafeAtomic<UInt64>

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
        headerSize + channels * capacity * MemoryLayout<Float>.size
    }

    /// Creates a new ring in a fresh memfd (the server side).
    public static func create(name: String, channels: Int, capacity: Int) throws(RingError) -> SharedRing {
        let fd = stagebox_memfd(name)
        guard fd >= 0 else { throw .system("memfd_create", errno) }
        let size = byteSize(channels: channels, capacity: capacity)
        guard ftruncate(fd, off_t(size)) == 0 else { let e = errno; close(fd); throw .system("ftruncate", e) }
        guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            let e = errno; close(fd); throw .system("mmap", e)
        }
        p.storeBytes(of: magic, as: UInt32.self)
        p.storeBytes(of: UInt32(channels), toByteOffset: 4, as: UInt32.self)
        p.storeBytes(of: UInt32(capacity), toByteOffset: 8, as: UInt32.self)
        return SharedRing(base: p, size: size, fd: fd, channels: channels, capacity: capacity)
    }

    /// Maps a ring received from the other side, checking its header against the file's size.
    public static func map(fileDescriptor fd: Int32) throws(RingError) -> SharedRing {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system("fstat", errno) }
        let fileSize = Int(st.st_size)
        guard fileSize >= headerSize else { throw .invalid("shared memory of \(fileSize) bytes is smaller than a ring header") }
        guard let p = mmap(nil, fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw .system("mmap", errno)
        }
        let m = p.load(as: UInt32.self)
        let channels = Int(p.load(fromByteOffset: 4, as: UInt32.self))
        let capacity = Int(p.load(fromByteOffset: 8, as: UInt32.self))
        guard m == magic, (1...32).contains(channels), (16...(1 << 20)).contains(capacity),
              byteSize(channels: channels, capacity: capacity) <= fileSize else {
            munmap(p, fileSize)
            throw .invalid("not a Stagebox ring (magic \(m), \(channels) channels, \(capacity) frames, \(fileSize) bytes)")
        }
        return SharedRing(base: p, size: fileSize, fd: fd, channels: channels, capacity: capacity)
    }

    private init(base: UnsafeMutableRawPointer, size: Int, fd: Int32, channels: Int, capacity: Int) {
        self.base = base
        self.mappedSize = size
        self.fileDescriptor = fd
        self.channels = channels
        self.capacity = capacity
        func atomic(_ offset: Int) -> UnsafeAtomic<UInt64> {
            UnsafeAtomic(at: (base + offset).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self))
        }
        writePosition = atomic(64)
        readPosition = atomic(128)
        underrunCount = atomic(192)
        overrunCount = atomic(200)
        ratioBits = atomic(208)
        timestampWrites = atomic(216)
        startThresholdFrames = atomic(224)
        data = (base + Self.headerSize).assumingMemoryBound(to: Float.self)
    }

    deinit {
        munmap(base, mappedSize)
        close(fileDescriptor)
    }

    // MARK: Both sides

    /// Frames waiting to be read.
    public var available: Int {
        let w = writePosition.load(ordering: .acquiring)
        let r = readPosition.load(ordering: .acquiring)
        return w >= r ? Int(min(w - r, UInt64(capacity))) : 0
    }

    public var underruns: Int { Int(underrunCount.load(ordering: .relaxed)) }
    public var overruns: Int { Int(overrunCount.load(ordering: .relaxed)) }

    /// The resampling ratio the client applies (1 when it does not resample), for reports.
    public var ratio: Double {
        get { let b = ratioBits.load(ordering: .relaxed); return b == 0 ? 1 : Double(bitPattern: b) }
        set { ratioBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    public func countUnderrun() { underrunCount.wrappingIncrement(ordering: .relaxed) }

    /// How many frames the consumer waits for before it starts (and after an underrun, starts
    /// again): the producer's cushion against its own jitter. The producer sets it; 0 = at once.
    public var startThreshold: Int {
        get { Int(startThresholdFrames.load(ordering: .relaxed)) }
        set { startThresholdFrames.store(UInt64(max(0, min(newValue, capacity / 2))), ordering: .relaxed) }
    }

    // MARK: Producer

    /// Producer: the write position, after dropping the oldest frames if `n` would not fit.
    @inline(__always)
    private func makeRoom(for n: Int) -> UInt64 {
        let w = writePosition.load(ordering: .relaxed)
        var r = readPosition.load(ordering: .acquiring)
        while Int(w &- r) + n > capacity {
            let newRead = w &+ UInt64(n) &- UInt64(capacity)
            let (exchanged, original) = readPosition.compareExchange(expected: r, desired: newRead,
                                                                     ordering: .acquiringAndReleasing)
            if exchanged { overrunCount.wrappingIncrement(ordering: .relaxed); break }
            r = original
        }
        return w
    }

    /// Writes `frames` interleaved frames. When the ring has no room, the oldest frames are
    /// dropped to make it, and an overrun is counted. Real-time safe.
    public func write(_ source: UnsafePointer<Float>, frames: Int, timestamp: Timestamp? = nil) {
        let n = min(frames, capacity)
        let w = makeRoom(for: n)
        copyIn(source + (frames - n) * channels, at: w, frames: n)
        if let t = timestamp { record(Timestamp(ringPosition: w, codecFrame: t.codecFrame, hostNanos: t.hostNanos)) }
        writePosition.store(w &+ UInt64(n), ordering: .releasing)
    }

    /// Writes `frames` frames from planar channels (`channel(c)` gives channel c's samples).
    public func write(planar channel: (Int) -> UnsafePointer<Float>, frames: Int, timestamp: Timestamp? = nil) {
        let n = min(frames, capacity)
        let w = makeRoom(for: n)
        let start = Int(w % UInt64(capacity))
        for c in 0..<channels {
            let src = channel(c)
            var index = start
            for i in 0..<n {
                data[index * channels + c] = src[i]
                index += 1
                if index == capacity { index = 0 }
            }
        }
        if let t = timestamp { record(Timestamp(ringPosition: w, codecFrame: t.codecFrame, hostNanos: t.hostNanos)) }
        writePosition.store(w &+ UInt64(n), ordering: .releasing)
    }

    private func copyIn(_ source: UnsafePointer<Float>, at position: UInt64, frames: Int) {
        let start = Int(position % UInt64(capacity))
        let first = min(frames, capacity - start)
        (data + start * channels).update(from: source, count: first * channels)
        if first < frames { data.update(from: source + first * channels, count: (frames - first) * channels) }
    }

    private func record(_ t: Timestamp) {
        let slot = Int(timestampWrites.load(ordering: .relaxed) % UInt64(Self.timestampSlots))
        let p = base + 256 + slot * 24
        p.storeBytes(of: t.ringPosition, as: UInt64.self)
        p.storeBytes(of: t.codecFrame, toByteOffset: 8, as: Int64.self)
        p.storeBytes(of: t.hostNanos, toByteOffset: 16, as: Int64.self)
        timestampWrites.wrappingIncrement(ordering: .releasing)
    }

    // MARK: Consumer

    /// Reads exactly `frames` interleaved frames into `destination`, or returns false (and
    /// reads nothing) when fewer are waiting. Real-time safe.
    public func read(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Bool {
        while true {
            let r = readPosition.load(ordering: .acquiring)
            let w = writePosition.load(ordering: .acquiring)
            guard Int(w &- r) >= frames else { return false }
            let start = Int(r % UInt64(capacity))
            let first = min(frames, capacity - start)
            destination.update(from: data + start * channels, count: first * channels)
            if first < frames { (destination + first * channels).update(from: data, count: (frames - first) * channels) }
            // If the producer dropped frames under us, what we copied may be torn: try again.
            if readPosition.compareExchange(expected: r, desired: r &+ UInt64(frames), ordering: .acquiringAndReleasing).exchanged {
                return true
            }
        }
    }

    /// Reads exactly `frames` frames into planar channels, or returns false when fewer are waiting.
    public func read(planar channel: (Int) -> UnsafeMutablePointer<Float>, frames: Int) -> Bool {
        while true {
            let r = readPosition.load(ordering: .acquiring)
            let w = writePosition.load(ordering: .acquiring)
            guard Int(w &- r) >= frames else { return false }
            let start = Int(r % UInt64(capacity))
            for c in 0..<channels {
                let dst = channel(c)
                var index = start
                for i in 0..<frames {
                    dst[i] = data[index * channels + c]
                    index += 1
                    if index == capacity { index = 0 }
                }
            }
            if readPosition.compareExchange(expected: r, desired: r &+ UInt64(frames), ordering: .acquiringAndReleasing).exchanged {
                return true
            }
        }
    }

    // MARK: Sources of a separate-streams receiver

    /// How many sources a separate-streams ring carries side by side.
    public static let sourceSlots = 8
    static let namesOffset = 2048
    static let nameSize = 64

    /// Control side: names the sources in their slots (a seqlock: the generation is odd while
    /// the table is being written).
    public func setSourceNames(_ names: [String]) {
        let generation = base.advanced(by: 232).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self)
        let gen = UnsafeAtomic<UInt64>(at: generation)
        gen.wrappingIncrement(ordering: .acquiringAndReleasing)
        for slot in 0..<Self.sourceSlots {
            let p = base + Self.namesOffset + slot * Self.nameSize
            let bytes = slot < names.count ? Array(names[slot].utf8.prefix(Self.nameSize - 1)) : []
            for (i, b) in bytes.enumerated() { p.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
            p.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        }
        gen.wrappingIncrement(ordering: .acquiringAndReleasing)
    }

    /// The source in each slot (empty: none), read consistently.
    public func sourceNames() -> [String] {
        let gen = UnsafeAtomic<UInt64>(at: base.advanced(by: 232).assumingMemoryBound(to: UnsafeAtomic<UInt64>.Storage.self))
        while true {
            let before = gen.load(ordering: .acquiring)
            if before % 2 == 1 { continue }
            var names: [String] = []
            for slot in 0..<Self.sourceSlots {
                let p = (base + Self.namesOffset + slot * Self.nameSize).assumingMemoryBound(to: UInt8.self)
                var n = 0
                while n < Self.nameSize - 1 && p[n] != 0 { n += 1 }
                names.append(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
            }
            if gen.load(ordering: .acquiring) == before { return names }
        }
    }

    /// The timestamp of the newest block at or before ring position `position`, if still kept.
    public func timestamp(atOrBefore position: UInt64) -> Timestamp? {
        let written = timestampWrites.load(ordering: .acquiring)
        var best: Timestamp?
        for k in 0..<UInt64(min(written, UInt64(Self.timestampSlots))) {
            let slot = Int((written - 1 - k) % UInt64(Self.timestampSlots))
            let p = base + 256 + slot * 24
            let t = Timestamp(ringPosition: p.load(as: UInt64.self), codecFrame: p.load(fromByteOffset: 8, as: Int64.self),
                              hostNanos: p.load(fromByteOffset: 16, as: Int64.self))
            if t.ringPosition <= position { best = t; break }
        }
        return best
    }

    /// The ring position the next read starts at.
    public var readPositionNow: UInt64 { readPosition.load(ordering: .acquiring) }
}

/// Why a ring could not be made or mapped.
public enum RingError: Error, Sendable, Equatable, CustomStringConvertible {
    case system(String, Int32)
    case invalid(String)

    public var description: String {
        switch self {
        case let .system(call, code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .invalid(let why): return why
        }
    }
}
