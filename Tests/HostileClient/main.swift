// stagebox-hostile-client: a bus client that misbehaves on purpose. It makes a sender, a
// receiver and a filter through the real client library, finds the shared memory of their rings
// in its own /proc/self/maps (the mappings the library made), and for SECONDS writes random and
// extreme values over every header word and the audio data, while it goes on sending and
// receiving as if nothing were wrong. The server must contain it: silence its ports, disconnect
// it, and let everyone else play on.
//
//   stagebox-hostile-client SOCKET SECONDS SEED
import StageboxClient
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

let args = CommandLine.arguments
guard args.count == 4, let seconds = Double(args[2]), var state = UInt64(args[3]) else {
    print("usage: stagebox-hostile-client SOCKET SECONDS SEED")
    exit(2)
}
func nextRandom() -> UInt64 {
    state ^= state >> 12; state ^= state << 25; state ^= state >> 27
    return state &* 2_685_821_657_736_338_717
}

let client: BusClient
do { client = try BusClient(name: "hostile", socketPath: args[1]) } catch { print("hostile: \(error)"); exit(1) }
let sender = try client.addSender(name: "out", channels: 2)
let receiver = try client.addReceiver(name: "in", channels: 2)
let filter = try client.addFilter(name: "fx", channels: 2) { samples, frames, _ in
    for i in 0..<(frames * 2) { samples[i] = .nan }
}
try client.connect(from: sender.name, to: "codec.out")
try client.connect(from: "codec.in", to: receiver.name)
try client.connect(from: "tone", to: filter.name)

/// The ring mappings: /memfd:hostile.* in our own address space.
func mappings() -> [(UnsafeMutableRawPointer, Int)] {
    guard let f = fopen("/proc/self/maps", "r") else { return [] }
    defer { fclose(f) }
    var found: [(UnsafeMutableRawPointer, Int)] = []
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), f) != nil {
        let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard text.contains("/memfd:hostile."), text.contains("rw-s") else { continue }
        let range = text.split(separator: " ")[0].split(separator: "-")
        guard range.count == 2, let lo = UInt(range[0], radix: 16), let hi = UInt(range[1], radix: 16),
              let p = UnsafeMutableRawPointer(bitPattern: lo) else { continue }
        found.append((p, Int(hi - lo)))
    }
    return found
}

let rings = mappings()
print("hostile: \(rings.count) ring mappings")

// Our descriptors: the rings' memfds and the wakeup sockets the server sent us.
func descriptors(where matches: (String) -> Bool) -> [Int32] {
    guard let dir = opendir("/proc/self/fd") else { return [] }
    defer { closedir(dir) }
    var found: [Int32] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let fd = Int32(name) else { continue }
        var target = [CChar](repeating: 0, count: 256)
        let n = readlink("/proc/self/fd/\(fd)", &target, 255)
        if n > 0 && matches(String(decoding: target.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)) { found.append(fd) }
    }
    return found
}
// Shrinking a ring under the server's mapping would make its next access a SIGBUS.
let memfds = descriptors { $0.contains("memfd:hostile.") }
let refused = memfds.filter { ftruncate($0, 4096) != 0 }.count
print("hostile: truncation refused for \(refused) of \(memfds.count) rings")
// Wakeups: make ours blocking (were they shared with the server's, its next wakeup could
// block) and flood the server with them.
let wakeups = descriptors { $0.hasPrefix("socket:") }.filter { fd in
    var type: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 && type == 2 // SOCK_DGRAM
}
for fd in wakeups { _ = fcntl(fd, F_SETFL, 0) }
var flood: UInt8 = 1
for _ in 0..<10_000 { for fd in wakeups { _ = send(fd, &flood, 1, Int32(MSG_DONTWAIT)) } }
print("hostile: \(wakeups.count) wakeups made blocking and flooded")
let words = [64, 128, 192, 200, 208, 216, 224, 232, 256, 264, 272, 1792, 1800, 1808, 1816, 1824]
let extremes: [UInt64] = [0, 1, .max, UInt64(Int64.max), UInt64(Int64.max) + 1, 1 << 62, Double.nan.bitPattern,
                          Double.infinity.bitPattern, (-1.0).bitPattern]
var block = [Float](repeating: 0.1, count: 480 * 2)
var pokes = 0
let end = Double(monotonicNanoseconds()) / 1e9 + seconds
while Double(monotonicNanoseconds()) / 1e9 < end {
    if let (base, size) = rings.isEmpty ? nil : rings[Int(nextRandom() % UInt64(rings.count))] {
        switch nextRandom() % 4 {
        case 0:
            let offset = words[Int(nextRandom() % UInt64(words.count))]
            base.storeBytes(of: extremes[Int(nextRandom() % UInt64(extremes.count))], toByteOffset: offset, as: UInt64.self)
        case 1:
            let offset = words[Int(nextRandom() % UInt64(words.count))]
            let old = base.load(fromByteOffset: offset, as: UInt64.self)
            base.storeBytes(of: old &+ (nextRandom() % 2 == 0 ? 1 : UInt64.max) &* (nextRandom() % 70_000), toByteOffset: offset,
                            as: UInt64.self)
        case 2:
            // Names, sizes and anything else in the header.
            base.storeBytes(of: UInt8(truncatingIfNeeded: nextRandom()), toByteOffset: Int(nextRandom() % 4096), as: UInt8.self)
        default:
            // Audio: NaN, infinities, huge values.
            let samples = (size - 4096) / 4
            if samples > 0 {
                let bits: [UInt32] = [0x7FC0_0000, 0x7F80_0000, 0xFF80_0000, 0x7149_F2CA, UInt32(truncatingIfNeeded: nextRandom())]
                base.storeBytes(of: bits[Int(nextRandom() % 5)], toByteOffset: 4096 + 4 * Int(nextRandom() % UInt64(samples)),
                                as: UInt32.self)
            }
        }
        pokes += 1
    }
    // And carry on as if nothing were wrong.
    block.withUnsafeBufferPointer { sender.send($0.baseAddress!, frames: 480) }
    block.withUnsafeMutableBufferPointer { _ = receiver.receive(into: $0.baseAddress!, frames: 480) }
    usleep(1000)
}
print("hostile: \(pokes) pokes in \(seconds) s")
client.close()
