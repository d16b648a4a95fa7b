import StageboxAudioFiles
import StageboxEngine
import StageboxRealtime

/// Carries playback audio from the audio thread to a file written on another thread,
/// through a lock-free queue of preallocated period blocks.
final class PlaybackRecorder: @unchecked Sendable {
    let writer: AudioFileWriter
    private let channels: Int
    private let period: Int
    /// Preallocated interleaved blocks; indices travel through the two queues.
    private let blocks: UnsafeMutablePointer<Float>
    private let blockCount = 256
    private let free: SPSCQueue<Int>
    private let full: SPSCQueue<Int>
    /// Periods lost because the writer fell behind.
    private(set) var dropped = 0

    init(writer: AudioFileWriter, channels: Int, period: Int) {
        self.writer = writer
        self.channels = channels
        self.period = period
        blocks = .allocate(capacity: blockCount * channels * period)
        free = SPSCQueue(capacity: blockCount)
        full = SPSCQueue(capacity: blockCount)
        for i in 0..<blockCount { free.push(i) }
    }

    deinit { blocks.deallocate() }

    /// Audio side: copies one period into a free block (drops it if none is free).
    @inline(__always)
    func push(_ buffer: AudioBuffer, frames: Int) {
        guard let index = free.pop() else { dropped += 1; return }
        let block = blocks + index * channels * period
        for c in 0..<channels {
            let src = buffer.channel(c)
            for i in 0..<frames { block[i * channels + c] = src[i] }
        }
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
