// stagebox-allocation-probe: runs the real ALSA codec loop (user-space `file`/`null` PCMs,
// free-running) with a graph that mixes, maps channels and generates a tone, and counts the heap
// allocations made on the audio thread over N periods after a warm-up, with ordo-one's malloc
// interposer. A program of its own, so that the interposer replaces malloc in this process only.
// Prints one line `allocations=A periods=P ...` and exits 0 when A is 0, 1 otherwise.
import CALSA
import Foundation
import MallocInterposerSwift
import StageboxBus
import StageboxCodec
import StageboxRealtime
import Synchronization

/// The thread whose allocations count, and the count. Plain globals: the allocation hook
/// runs inside malloc and may touch nothing that allocates.
let watchedThread = Atomic<UInt>(0)
let armed = Atomic<Bool>(false)
let audioThreadAllocations = Atomic<Int>(0)

func countAudioThreadAllocation(_ size: Int) {
    if armed.load(ordering: .relaxed) && watchedThread.load(ordering: .relaxed) == currentThreadID() {
        audioThreadAllocations.add(1, ordering: .relaxed)
    }
}

let measured = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000
let period = 64, warmup = 200
// Room for the watcher below to arm late on a busy machine; the probe stops the loop itself.
let frames = (warmup + measured) * period * 3
stagebox_alsa_silence_errors()

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-alloc-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let input = folder.appendingPathComponent("in.raw")
try Data(count: frames * 2 * 4).write(to: input)
let config = try ALSAConfigText("""
    pcm.cap { type file slave.pcm { type null } file "/dev/null" infile "\(input.path)" format raw }
    pcm.play { type file slave.pcm { type null } file "\(folder.appendingPathComponent("out.raw").path)" format raw }
    """)
let engine = Engine(settings: EngineSettings(sampleRate: 48000, maxFrames: period, inputs: 2, outputs: 2))
try engine.connect(from: "codec.in", to: "codec.out")
try engine.connect(from: "tone", to: "codec.out")
let control = DriverControl(frameLimit: frames)
let driver = ALSADriver(parameters: ALSAParameters(captureDevice: "cap", playbackDevice: "play", format: .s32,
                                                   sampleRate: 48000, inputs: 2, outputs: 2, period: period,
                                                   periods: 2, realtimePriority: 0),
                        engine: engine, control: control, pacing: .free, config: config)
try driver.open()

_ = (watchedThread.load(ordering: .relaxed), armed.load(ordering: .relaxed), audioThreadAllocations.load(ordering: .relaxed))
MallocInterposerSwift.initialize()
MallocInterposerSwift.setAllocationHook(countAudioThreadAllocation)
MallocInterposerSwift.hook()

// The counter must see allocations at all, or a zero below would prove nothing.
watchedThread.store(currentThreadID(), ordering: .relaxed)
armed.store(true, ordering: .relaxed)
let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
probe.deallocate()
armed.store(false, ordering: .relaxed)
let sanity = audioThreadAllocations.load(ordering: .relaxed)
audioThreadAllocations.store(0, ordering: .relaxed)
watchedThread.store(0, ordering: .relaxed)

let thread = RealtimeThread {
    watchedThread.store(currentThreadID(), ordering: .relaxed)
    _ = driver.runLoop()
}
thread.start()
// Arm after the warm-up, disarm before the loop winds down (drop and close may allocate).
while control.framesProcessed.load(ordering: .relaxed) < warmup * period { usleep(200) }
let armedAt = control.framesProcessed.load(ordering: .relaxed)
armed.store(true, ordering: .relaxed)
while control.framesProcessed.load(ordering: .relaxed) < armedAt + (measured + 10) * period { usleep(200) }
armed.store(false, ordering: .relaxed)
let periodsArmed = (control.framesProcessed.load(ordering: .relaxed) - armedAt) / period
control.requestStop()
thread.join()
MallocInterposerSwift.unhook()
driver.close()

let count = audioThreadAllocations.load(ordering: .relaxed)
print("allocations=\(count) periods=\(periodsArmed) counter-check=\(sanity) \(control.statistics.snapshot().summary)")
exit(count == 0 && sanity > 0 && periodsArmed >= measured ? 0 : 1)
