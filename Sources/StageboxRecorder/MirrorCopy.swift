import StageboxRealtime
import Synchronization

/// One take's second copy, between the takes' writer, which hands it every frame it wrote,
/// and the mirror's thread, which writes them to the other medium. One ring per source file:
/// single producer (the takes' writer), single consumer (the mirror).
final class MirrorCopy: Sendable {
    struct Plan: Sendable {
        /// The file's name, the same as on the main medium; the mirror finds the directory.
        var file: String
        var format: TakeFormat
        var bext: BroadcastInfo
    }

    let name: String
    let plans: [Plan]
    let rings: [SampleRing]
    /// Set by the takes' writer after its last frame: the mirror closes once the rings are empty.
    let ended = Atomic<Bool>(false)
    /// Set by the takes' writer when a ring was full (the medium fell behind): the copy ends.
    let overflowed = Atomic<Bool>(false)
    /// Set by the mirror when the copy failed or ended: the takes' writer stops handing frames.
    let closed = Atomic<Bool>(false)
    /// Cue points for one file each (markers, gaps), from the takes' writer to the mirror.
    let cues = Mutex<[(file: Int, frame: Int64, label: String)]>([])

    init(name: String, plans: [Plan], ringSeconds: Double) {
        self.name = name
        self.plans = plans
        rings = plans.map { SampleRing(channels: $0.format.channels, capacityFrames: Int(ringSeconds * Double($0.format.sampleRate))) }
    }

    /// The takes' writer's side: the frames it just wrote to file `index`. False once the copy
    /// no longer takes frames (full, failed, ended).
    @discardableResult
    func hand(_ index: Int, _ samples: UnsafePointer<Float>, frames: Int) -> Bool {
        guard !closed.load(ordering: .acquiring), !overflowed.load(ordering: .relaxed) else { return false }
        var done = 0
        while done < frames { // in pieces: a pre-roll comes as one long stretch
            let n = min(4096, frames - done)
            guard rings[index].write(interleaved: samples + done * plans[index].format.channels, frames: n) else {
                overflowed.store(true, ordering: .releasing)
                return false
            }
            done += n
        }
        return true
    }
}
