import StageboxEngine
import StageboxProtocol
import StageboxSystem

/// A client's filter in the signal path: the period goes to the client, and the audio thread
/// waits for the processed period until the cycle's filter deadline. That deadline is one for
/// the whole cycle (`budgetNanos` after the period began), shared by every filter: a late filter
/// eats into the others' time, never into the period's. A client that misses it is bypassed for
/// that period (the audio passes unprocessed); after `lateAfter` misses in a row it is marked
/// late and bypassed without waiting until it has caught up.
final class ClientFilterProcessor: PortProcessor, @unchecked Sendable {
    // @unchecked: `missesInARow`, `stale` and the scratch buffer are the audio thread's alone.
    let toClient: SharedRing
    let fromClient: SharedRing
    let wakeClient: Wakeup
    let wakeServer: Wakeup
    /// How long after the period's start every filter's answer must be in.
    let budgetNanos: Int64
    let counters: ClientPortCounters
    private let scratch: AudioBuffer
    private let lateAfter = 8
    private var missesInARow = 0
    /// Processed periods that will still arrive for periods we already gave up on.
    private var stale = 0

    init(toClient: SharedRing, fromClient: SharedRing, wakeClient: Wakeup, wakeServer: Wakeup,
         budgetNanos: Int64, period: Int, counters: ClientPortCounters) {
        self.toClient = toClient
        self.fromClient = fromClient
        self.wakeClient = wakeClient
        self.wakeServer = wakeServer
        self.budgetNanos = budgetNanos
        self.counters = counters
        scratch = AudioBuffer(channels: toClient.channels, capacity: period)
    }

    func process(_ buffer: AudioBuffer, frames: Int, cycle: CycleInfo) {
        toClient.stamp(cycle)
        if counters.faulted(toClient) || counters.faulted(fromClient) { return buffer.clear(frames: frames) }
        // Throw away answers to periods that were already bypassed (bounded: at most all of them).
        while stale > 0 && fromClient.read(planar: { scratch.channel($0) }, frames: frames) { stale -= 1 }
        if counters.late.load(ordering: .relaxed) {
            if stale > 0 { return } // still behind: pass the audio through untouched
            counters.late.store(false, ordering: .relaxed)
        }
        toClient.write(planar: { UnsafePointer(buffer.channel($0)) }, frames: frames, timestamp: toClient.timestamp(cycle))
        wakeClient.signal()
        let deadline = cycle.startNanos + budgetNanos
        // Each pass waits until the deadline at most, and the deadline does not move: bounded.
        while true {
            if fromClient.read(planar: { buffer.channel($0) }, frames: frames) {
                buffer.replaceNonFinite(frames: frames)
                missesInARow = 0
                return
            }
            let left = deadline - monotonicNanoseconds()
            if left <= 0 { break }
            _ = wakeServer.wait(timeoutNanos: left)
        }
        // Missed: the input passes through unprocessed, and the late answer will be discarded.
        stale += 1
        missesInARow += 1
        counters.deadlineMisses.add(1, ordering: .relaxed)
        if missesInARow >= lateAfter { counters.late.store(true, ordering: .relaxed) }
    }
}
