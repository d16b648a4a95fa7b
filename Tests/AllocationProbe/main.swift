// stagebox-allocation-probe: runs the real ALSA codec loop (user-space `file`/`null` PCMs, paced
// by the timer) with the bus server and its clients, and counts on the audio thread, over N
// periods after a warm-up, the heap allocations (ordo-one's malloc interposer), the calls that
// take or wait on a lock (Tests/LockCounter) and the page faults (/proc/self/task/TID/stat), with
// the memory locked as the appliance locks it (code whole, the rest on first touch). While it
// counts: 8 client ports (senders at 48 and 44.1 kHz and of 16-bit samples, receivers at 48 and
// 16 kHz, a filter, a separate-streams receiver, and a sender in a child process), a client that
// joins, a graph change every 10 periods, a codec restart as after an xrun, and the child client
// killed mid-stream. A program of its own, so that the interposers replace nobody else's
// functions. Prints one line `allocations=A locks=L ... page-faults=F ...` and exits 0 when all
// three are 0 and everything it was to exercise happened.
import CALSA
import CLinux
import Foundation
import Logging
import LockCounter
import MallocInterposerSwift
import StageboxEngine
import StageboxBusServer
import StageboxClient
import StageboxDrivers
import StageboxRealtime
import StageboxRecorder
import StageboxAudioFiles
import Synchronization
import StageboxTriggers

if CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--client" {
    runChildClient(socket: CommandLine.arguments[2])
}

/// The thread whose allocations count, and the count. Plain globals: the allocation hook
/// runs inside malloc and may touch nothing that allocates.
let watchedThread = Atomic<UInt>(0)
let armed = Atomic<Bool>(false)
let audioThreadAllocations = Atomic<Int>(0)
let audioThreadID = Atomic<Int32>(0)

/// The thread's page faults so far, minor and major: fields 10 and 12 of its stat, counted
/// after the parenthesised name (which may hold spaces).
func pageFaults(thread: Int32) -> Int {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return -1 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 10, let minor = Int(fields[7]), let major = Int(fields[9]) else { return -1 }
    return minor + major
}

func countAudioThreadAllocation(_ size: Int) {
    if armed.load(ordering: .relaxed) && watchedThread.load(ordering: .relaxed) == currentThreadID() {
        audioThreadAllocations.add(1, ordering: .relaxed)
    }
}

// As `stagebox run` does: alsa-lib's own per-PCM mutex is off, as only the audio thread touches
// the PCMs while the loop runs (alsa-lib takes it for plugins such as these `file` and `null` ones;
// `hw` PCMs never need it).
setenv("LIBASOUND_THREAD_SAFE", "0", 1)
let memoryLock = MemoryLock.lock()
let measured = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 6000 : 6000
let period = 64, warmup = 300
stagebox_alsa_silence_errors()
signal(SIGPIPE, SIG_IGN)

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-alloc-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let config = try ALSAConfigText("""
    pcm.cap { type file slave.pcm { type null } file "/dev/null" infile "/dev/zero" format raw }
    pcm.play { type null }
    """)
let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: period, inputs: 2, outputs: 2))
try engine.connect(from: "codec.in", to: "codec.out")
try engine.connect(from: "tone", to: "codec.out")
try engine.connect(from: "codec.in:2", to: "codec.out:1") // a channel connection beside the whole ports
let control = DriverControl()
let driver = ALSADriver(parameters: ALSAParameters(captureDevice: "cap", playbackDevice: "play", format: .s32,
                                                   sampleRate: 48000, inputs: 2, outputs: 2, periods: 2, realtimePriority: 0),
                        engine: engine, control: control, pacing: .automatic, config: config)
try driver.open()

var logger = Logger(label: "probe")
logger.logLevel = .critical
let socket = folder.appendingPathComponent("bus.sock").path
let server = try BusServer(settings: BusServerSettings(socketPath: socket, maxClients: 8, maxPortsPerClient: 16),
                           engine: engine, triggers: TriggerBoard(), logger: logger, serverVersion: "probe")
try server.start()
let clients = try ProbeClients(socket: socket)
let child = Process()
child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
child.arguments = ["--client", socket]
let childOut = Pipe()
child.standardOutput = childOut
try child.run()
_ = childOut.fileHandleForReading.readData(ofLength: 6) // "ready\n"
// The recorder's taps (on two sources) and the take player run on the audio thread too. The
// takes are mirrored (as onto a USB stick) to another medium, /dev/shm: the mirror's thread and
// rings must leave the audio thread as they found it.
let mirrorFolder = "/dev/shm/stagebox-alloc-mirror-\(getpid())"
try FileManager.default.createDirectory(atPath: mirrorFolder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: mirrorFolder) }
let recorder = Recorder(settings: RecorderSettings(directory: folder.path, sources: ["codec.in", "tone"], sampleRate: 48000,
                                                   syncIntervalMs: 100, minFreeMB: 0, mirror: mirrorFolder),
                        engine: engine, logger: logger)
try recorder.startWriter()
let playFile = folder.appendingPathComponent("play.wav").path
do {
    let writer = try AudioFileWriter(path: playFile, sampleRate: 44100, channels: 1, encoding: .pcm16)
    try writer.write((0..<44100).map { Float(sin(Double($0) * 0.05)) * 0.5 })
    try writer.close()
}
let player = TakePlayer(engine: engine, logger: logger)
let portsWithClients = engine.ports.count

_ = (watchedThread.load(ordering: .relaxed), armed.load(ordering: .relaxed), audioThreadAllocations.load(ordering: .relaxed))
lock_counter_init()
MallocInterposerSwift.initialize()
MallocInterposerSwift.setAllocationHook(countAudioThreadAllocation)
MallocInterposerSwift.hook()

// The counters must see allocations and locks at all, or the zeros below would prove nothing.
watchedThread.store(currentThreadID(), ordering: .relaxed)
lock_counter_watch_current_thread()
armed.store(true, ordering: .relaxed)
lock_counter_arm(1)
let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
probe.deallocate()
var mutex = pthread_mutex_t()
pthread_mutex_init(&mutex, nil)
pthread_mutex_lock(&mutex)
pthread_mutex_unlock(&mutex)
lock_counter_arm(0)
armed.store(false, ordering: .relaxed)
// And the fault count must see faults: fresh pages touched on this thread.
let faultsBeforeTouch = pageFaults(thread: stagebox_thread_id())
let fresh = mmap(nil, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
for page in 0..<64 { fresh.storeBytes(of: 1, toByteOffset: page * 4096, as: UInt8.self) }
munmap(fresh, 64 * 4096)
let sanity = (audioThreadAllocations.load(ordering: .relaxed), lock_counter_count(),
              pageFaults(thread: stagebox_thread_id()) - faultsBeforeTouch)
audioThreadAllocations.store(0, ordering: .relaxed)
watchedThread.store(0, ordering: .relaxed)

let thread = RealtimeThread {
    watchedThread.store(currentThreadID(), ordering: .relaxed)
    audioThreadID.store(stagebox_thread_id(), ordering: .relaxed)
    lock_counter_watch_current_thread()
    _ = driver.run()
}
try thread.start()
clients.start()
func periodsDone() -> Int { control.framesProcessed.load(ordering: .relaxed) / period }
while periodsDone() < warmup { usleep(200) }
let armedAt = periodsDone()
let countedBefore = lock_counter_count()
let faultsBefore = pageFaults(thread: audioThreadID.load(ordering: .relaxed))
armed.store(true, ordering: .relaxed)
lock_counter_arm(1)

// While counting: a graph change every 10 periods, a restart, a client killed mid-stream.
var changes = 0, lastChange = armedAt, restarted = false, killed = false
var take: RunningTake?, recording = false, marked = false, playFailed = false
// A client that joins while the faults are counted: its rings are mapped in when they arrive
// (under MCL_ONFAULT nothing else would), not by the audio thread's first touch.
var late: (client: BusClient, receiver: ReceiverPort, sender: SenderPort)?
while periodsDone() < armedAt + measured {
    let now = periodsDone()
    if now - lastChange >= 10 {
        lastChange = now
        if changes % 2 == 0 {
            try engine.connect(from: "tone", to: "probe.r2")
            try engine.connect(from: "codec.in:1", to: "probe.r1:2")
        } else {
            try engine.disconnect(from: "tone", to: "probe.r2")
            try engine.disconnect(from: "codec.in:1", to: "probe.r1:2")
        }
        changes += 1
        engine.collect()
    }
    if late == nil && now - armedAt > measured / 4 {
        let client = try BusClient(name: "late", socketPath: socket)
        late = (client, try client.addReceiver(name: "r", channels: 2), try client.addSender(name: "s", channels: 2))
        try client.connect(from: "codec.in", to: "late.r")
        try client.connect(from: "late.s", to: "codec.out")
    }
    if !restarted && now - armedAt > measured / 3 { control.requestRestart(); restarted = true }
    if !recording && take == nil && now - armedAt > measured / 5 {
        take = try? recorder.start().get()
        if case .failure = player.play(playFile) { playFailed = true }
        recording = true
    }
    if recording && now - armedAt > measured / 2 && !marked { recorder.mark(label: "probe"); marked = true }
    if recording && now - armedAt > measured * 4 / 5 { recorder.stop(); player.stop(); recording = false }
    if !killed && now - armedAt > measured / 2 { kill(child.processIdentifier, SIGKILL); killed = true }
    usleep(300)
}
lock_counter_arm(0)
armed.store(false, ordering: .relaxed)
let periodsArmed = periodsDone() - armedAt
let locks = lock_counter_count() - countedBefore
let faultsAfter = pageFaults(thread: audioThreadID.load(ordering: .relaxed))
let faults = faultsBefore < 0 || faultsAfter < 0 ? -1 : faultsAfter - faultsBefore
control.requestStop()
thread.join()
MallocInterposerSwift.unhook()
child.waitUntilExit()
let victimGone = !engine.ports.contains { $0.name.hasPrefix("victim.") }
var sawRestart = false
while let event = control.events.pop() { if event.kind == .restart { sawRestart = true } }
recorder.shutdown()
let recorded = recorder.recentTakes.map(\.frames).reduce(0, +)
let mirrored: Bool = if case .copied = recorder.mirrorState { true } else { false }
clients.stop()
late?.client.close()
server.stop()
driver.close()

let count = audioThreadAllocations.load(ordering: .relaxed)
print("allocations=\(count) locks=\(locks) periods=\(periodsArmed) ports=\(portsWithClients) client-ports=\(portsWithClients - 3) "
      + "graph-changes=\(changes) restart=\(sawRestart) killed-client-removed=\(victimGone) "
      + "counter-check=\(sanity.0),\(sanity.1),\(sanity.2) recorded-frames=\(recorded) takes=\(recorder.recentTakes.count) mirrored=\(mirrored) "
      + "played=\(!playFailed) late-client=\(late != nil) page-faults=\(faults) memory-locked=\(memoryLock.error == 0 && memoryLock.onFault) "
      + "\(control.statistics.snapshot().summary)")
let ok = count == 0 && locks == 0 && faults == 0 && sanity.0 > 0 && sanity.1 > 0 && sanity.2 >= 64 && periodsArmed >= measured && sawRestart && victimGone
    // Graph changes at half the intended rate at least: on a loaded machine the changer lags.
    && changes >= measured / 20 && portsWithClients - 3 >= 8 && take != nil && recorded > 0
    && recorder.recentTakes.count == 2 && !playFailed && mirrored && late != nil
exit(ok ? 0 : 1)
