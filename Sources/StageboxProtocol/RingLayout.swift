/// Where things sit in a ring's 4096-byte header. Each side owns some words and only reads the
/// others' (see `SharedRing`); the comment says who writes each.
enum RingLayout {
    static let headerSize = 4096
    // Sizes, written once by the server at creation: magic 0, channels 4, capacity 8 (UInt32 each).
    /// Producer.
    static let writePosition = 64
    /// Consumer (and the producer when it drops the oldest frames).
    static let readPosition = 128
    /// Whoever finds the ring empty (the consumer).
    static let underruns = 192
    /// The producer.
    static let overruns = 200
    /// The client: its conversion ratio, for reports.
    static let ratio = 208
    /// The producer: how many timestamps it has written.
    static let timestampWrites = 216
    /// A sender client: frames to wait for before the bus starts reading.
    static let startThreshold = 224
    /// The server: seqlock generation of the source-name table.
    static let namesGeneration = 232
    /// A consumer client while it waits: wake it once this many frames wait (0 = every write).
    static let wakeThreshold = 240
    /// The producer: 64 slots of (ring position, codec frame, host nanoseconds).
    static let timestamps = 256
    static let timestampSlots = 64
    static let timestampSize = 24
    /// The server: the codec clock, a seqlock (generation, frame, nanoseconds) written every period.
    static let clockGeneration = 1792
    static let clockFrame = 1800
    static let clockNanos = 1808
    /// The client: the fill level its drift correction holds, for reports.
    static let targetFill = 1816
    /// A sender client: the write position at which its stream ends (+1; 0 = not ending).
    static let endPosition = 1824
    /// The server: source names of a separate-streams receiver, 8 × 64 bytes.
    static let names = 2048
    static let nameSize = 64
    static let sourceSlots = 8
}
