import Logging
import StageboxSystem
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `takes copy`: the takes a stick does not have yet, copied onto it on a thread of their own
/// and each verified: the copy is synced, dropped from the page cache and read back from the
/// stick, and its CRC-32 must match the take's. A copy is written as NAME.copying and renamed
/// only once verified, so after a power cut or a pull the stick holds whole, verified takes
/// and at most one unfinished file, removed when the stick comes back (`mediumMounted`).
public final class TakeCopier: Sendable {
    public enum State: Sendable, Equatable {
        case idle
        case copying(done: Int, of: Int, bytesDone: UInt64, bytesTotal: UInt64, into: String)
        case finished(copied: Int, bytes: UInt64, seconds: Double, into: String)
        case failed(String)
    }

    private let state = Mutex<State>(.idle)
    private let busy = Atomic<Bool>(false)
    /// Where the running copy writes, and why it was called off (its stick went).
    private let target = Mutex<(into: String, cancelled: String?)?>(nil)
    private let logger: Logger
    private static let chunk = 1 << 20

    public init(logger: Logger) { self.logger = logger }

    public var current: State { state.withLock { $0 } }
    public var isCopying: Bool { busy.load(ordering: .acquiring) }

    /// The takes in `from` (names ending .wav) that `into` has not got whole: no file of that
    /// name and size. A take the mirror split there (NAME_part002.wav beside it, on FAT32)
    /// counts as there: copying it whole over its first part would break the set.
    public static func missing(from: String, into: String) -> [(name: String, bytes: UInt64)] {
        TakeDirectory.wavFiles(in: from).compactMap { name in
            guard let bytes = size(from + "/" + name), bytes > 0 else { return nil }
            if size(into + "/" + name) == bytes { return nil }
            if size(into + "/" + name.dropLast(4) + "_part002.wav") != nil { return nil }
            return (name, bytes)
        }
    }

    /// Starts copying `takes` from `from` into `into` (made if missing); `finished` is called on
    /// the copy's thread at the end. Nil when it started, else why not.
    /// `waitWhile` is asked before each piece: while it says so (a take records) the copy
    /// waits, so that it never competes with a take for the card.
    public func start(_ takes: [(name: String, bytes: UInt64)], from: String, into: String,
                      waitWhile: @escaping @Sendable () -> Bool = { false },
                      finished: @escaping @Sendable (State) -> Void) -> String? {
        guard busy.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return "a copy is already running"
        }
        let total = takes.reduce(0) { $0 + $1.bytes }
        state.withLock { $0 = .copying(done: 0, of: takes.count, bytesDone: 0, bytesTotal: total, into: into) }
        target.withLock { $0 = (into, nil) }
        let started = PosixThread.start(named: "the take copier", stackSize: PosixThread.serviceStackSize) { [self] in
            let ended = run(takes, from: from, into: into, total: total, waitWhile: waitWhile)
            target.withLock { $0 = nil }
            state.withLock { $0 = ended }
            busy.store(false, ordering: .releasing)
            finished(ended)
        }
        switch started {
        case .success(let thread):
            thread.detach() // its end is `busy` and `finished`
            return nil
        case .failure(let error):
            state.withLock { $0 = .failed("\(error)") }
            target.withLock { $0 = nil }
            busy.store(false, ordering: .releasing)
            return "\(error)"
        }
    }

    /// Calls off a copy onto `mountPoint` (its stick was pulled or ejected): it stops at its
    /// next piece, its unfinished file removed.
    public func cancel(onto mountPoint: String, because reason: String) {
        target.withLock { running in
            guard let into = running?.into, into.isInside(mountPoint) else { return }
            running?.cancelled = reason
        }
    }

    private var cancelled: String? { target.withLock { $0?.cancelled } }

    private func run(_ takes: [(name: String, bytes: UInt64)], from: String, into: String, total: UInt64,
                     waitWhile: @Sendable () -> Bool) -> State {
        let t0 = monotonicNanoseconds()
        if mkdir(into, 0o755) != 0 && errno != EEXIST {
            return fail(SystemCallError.last("making", into).description)
        }
        var bytesDone: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        var lastLogged = -1
        for (index, take) in takes.enumerated() {
            let target = into + "/" + take.name
            do throws(SystemCallError) {
                try copy(from + "/" + take.name, to: target, buffer: &buffer, waitWhile: waitWhile) { n in
                    bytesDone += UInt64(n)
                    state.withLock { $0 = .copying(done: index, of: takes.count, bytesDone: bytesDone, bytesTotal: total, into: into) }
                    let percent = total > 0 ? Int(bytesDone * 100 / total) : 100
                    if percent / 10 != lastLogged / 10 {
                        lastLogged = percent
                        logger.info("takes copy: \(percent) % (\(index + 1) of \(takes.count): \(take.name))")
                    }
                }
            } catch {
                let why = error.errno == .noSpace ? "\(into) is full (\(take.name) did not fit)"
                    : error.errno == .fileTooLarge ? "\(take.name) is too large for \(into)'s filesystem (FAT32 holds files up to 4 GiB: use an exFAT stick)"
                    : "\(error)"
                return fail("\(why); \(index) of \(takes.count) takes copied before it")
            }
        }
        let seconds = Double(monotonicNanoseconds() - t0) / 1e9
        let rate = seconds > 0 ? Double(bytesDone) / seconds / 1e6 : 0
        logger.info("takes copy: \(takes.count) takes, \(bytesDone) bytes copied to \(into) and verified in \(tenths(seconds)) s (\(tenths(rate)) MB/s)")
        return .finished(copied: takes.count, bytes: bytesDone, seconds: seconds, into: into)
    }

    private func fail(_ why: String) -> State {
        logger.error("takes copy: \(why)")
        return .failed(why)
    }

    /// Copies `source` to `target` through `target`.copying, verifies, renames.
    private func copy(_ source: String, to target: String, buffer: inout [UInt8], waitWhile: @Sendable () -> Bool,
                      progress: (Int) -> Void) throws(SystemCallError) {
        let unfinished = target + Recorder.unfinishedCopySuffix
        let input = try SystemCallError.naming("opening", source) { try FileDescriptor.open(FilePath(source), .readOnly, options: .closeOnExec) }
        defer { try? input.close() }
        let output = try SystemCallError.naming("creating", unfinished) {
            try FileDescriptor.open(FilePath(unfinished), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                    permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        var written = CRC32()
        do throws(SystemCallError) {
            var waited = false
            while true {
                while waitWhile() && cancelled == nil {
                    if !waited { logger.info("takes copy: waiting for the take to end") }
                    waited = true
                    usleep(100_000)
                }
                if let why = cancelled { throw SystemCallError("copying to", "\(target): \(why)", errno: .canceled) }
                let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { read(input.rawValue, raw.baseAddress, raw.count) } }
                if n < 0 { throw SystemCallError.last("reading", source) }
                if n == 0 { break }
                var failure: Errno?
                buffer.withUnsafeBytes { raw in
                    let piece = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                    written.update(piece)
                    do { _ = try output.writeAll(piece) } catch { failure = (error as? Errno) ?? .ioError }
                }
                if let failure { throw SystemCallError("writing", unfinished, errno: failure) }
                progress(n)
            }
            if fsync(output.rawValue) != 0 { throw SystemCallError.last("syncing", unfinished) }
            // What is read back must come from the stick, not from the pages just written.
            _ = posix_fadvise(output.rawValue, 0, 0, POSIX_FADV_DONTNEED)
            try? output.close()
        } catch {
            try? output.close()
            unlink(unfinished)
            throw error
        }
        let readBack: UInt32
        do { readBack = try Self.crc(of: unfinished, buffer: &buffer) } catch {
            unlink(unfinished)
            throw error
        }
        guard readBack == written.value else {
            unlink(unfinished)
            throw SystemCallError("verifying", "\(target): read back as CRC-32 \(hex(readBack)), written as \(hex(written.value))", errno: .ioError)
        }
        if rename(unfinished, target) != 0 {
            let failed = SystemCallError.last("renaming \(unfinished) to", target)
            unlink(unfinished)
            throw failed
        }
        try WholeFile.syncDirectory(of: target)
    }

    private static func crc(of path: String, buffer: inout [UInt8]) throws(SystemCallError) -> UInt32 {
        let fd = try SystemCallError.naming("opening", path) { try FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec) }
        defer { try? fd.close() }
        _ = posix_fadvise(fd.rawValue, 0, 0, POSIX_FADV_DONTNEED)
        var crc = CRC32()
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { read(fd.rawValue, raw.baseAddress, raw.count) } }
            if n < 0 { throw SystemCallError.last("reading back", path) }
            if n == 0 { break }
            buffer.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return crc.value
    }

    private static func size(_ path: String) -> UInt64? {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG ? UInt64(st.st_size) : nil
    }
}

private func hex(_ v: UInt32) -> String { String(v, radix: 16) }

/// One decimal: 12.3.
private func tenths(_ v: Double) -> String {
    let n = Int((v * 10).rounded())
    return "\(n / 10).\(n % 10)"
}
