import StageboxAudioFiles
import StageboxEngine
import StageboxRealtime
import Synchronization

/// Carries playback audio from the audio thread to a file written on another thread,
/// through a lock-free queue of preallocated period blocks.
///
/// `@unchecked Sendable`: a block belongs to one side at a time; its index travels through the
/// two single-producer single-consumer queues (the audio thread fills, the writer empties).
final class PlaybackRecorder: @unchecked Sendable {
    let writer: AudioFileWriter
    private let channels: Int
    private let period: Int
    /// Preallocated interleaved blocks; indices travel through the two queues.
    private let blocks: UnsafeMutablePointer<Float>
    private let blockCount = 256
    private let free: SPSCQueue<Int>
    private let full: SPSCQueue<Int>
    /// Periods lost because the writer fell behind (every block was waiting to be written).
    private let dropped = Atomic<Int>(0)
    var droppedPeriods: Int { dropped.load(ordering: .relaxed) }

    init(writer: AudioFileWriter, channels: Int, period: Int) {
        self.writer = writer
        self.channels = channels
        self.period = period
        blocks = .allocate(capacity: blockCount * channels * period)
        blocks.initialize(repeating: 0, count: blockCount * channels * period) // touched here, not on the audio thread
        free = SPSCQueue(capacity: blockCount)
        full = SPSCQueue(capacity: blockCount)
        for i in 0..<blockCount { free.push(i) }
    }

    deinit { blocks.deallocate() }

    /// Audio side: copies one period into a free block (drops it if none is free).
    @inline(__always)
    func push(_ buffer: AudioBuffer, frames: Int) {
        guard let index = free.pop() else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        buffer.interleave(frames: frames, into: blocks + index * channels * period)
        full.push(index)
    }

    /// Writer side: writes every full block to the file.
    func drain() throws(AudioFileError) {
        while let index = full.pop() {
            try writer.write(blocks + index * channels * period, frames: period)
            free.push(index)
        }
    }
}
