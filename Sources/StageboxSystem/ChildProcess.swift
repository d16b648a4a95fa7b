import CLinux
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a program and hands its output (stdout and stderr, merged) over line by line as it
/// comes, for tools that report progress on their output (`rauc install`). Written on
/// posix_spawn because the firmware links no Foundation, and swift-subprocess needs a newer
/// compiler than the aarch64 cross build's (Debian's Swift 6.0).
public enum ChildProcess {
    public struct Outcome: Sendable, Equatable {
        /// The exit status, or 128 + the signal that ended it.
        public var status: Int32
        /// Every line it wrote, without the newlines.
        public var lines: [String]

        /// It ran past its time limit and was killed (`status` is then 128 + 9).
        public var timedOut = false

        public init(status: Int32, lines: [String], timedOut: Bool = false) {
            self.status = status
            self.lines = lines
            self.timedOut = timedOut
        }
    }

    /// Runs `path` with `arguments` (not searched in PATH) and `environment` added to ours,
    /// stdin from /dev/null; calls `onLine` with each line as it arrives; returns when it exits.
    /// With `timeoutSeconds`, a child still running after it is killed (SIGKILL) and
    /// `timedOut` says so: a checker stuck on a dead stick must not hold its thread for ever.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                           timeoutSeconds: Double? = nil,
                           onLine: (String) -> Void = { _ in }) throws(SystemCallError) -> Outcome {
        // Close-on-exec: no other child started meanwhile keeps the write end (and our EOF) open.
        var ends: [Int32] = [-1, -1]
        guard stagebox_pipe_cloexec(&ends) == 0 else { throw SystemCallError.last("making a pipe for", path) }
        let pipe = (read: FileDescriptor(rawValue: ends[0]), write: FileDescriptor(rawValue: ends[1]))
        defer { try? pipe.read.close() }
        let pid: pid_t
        do {
            pid = try spawn(path, arguments, environment: environment, output: pipe.write)
        } catch {
            try? pipe.write.close()
            throw error
        }
        try? pipe.write.close()
        var lines: [String] = []
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = timeoutSeconds.map { monotonicNanoseconds() + Int64($0 * 1e9) }
        var timedOut = false
        while true {
            if let deadline, !timedOut {
                var ready = pollfd(fd: pipe.read.rawValue, events: Int16(POLLIN), revents: 0)
                let left = max(0, deadline - monotonicNanoseconds())
                let polled = stagebox_poll_ns(&ready, 1, left)
                if polled < 0 && errno == EINTR { continue }
                if polled == 0 {
                    kill(pid, SIGKILL) // then read on to the end of its output
                    timedOut = true
                    continue
                }
            }
            let n = buffer.withUnsafeMutableBytes { read(pipe.read.rawValue, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            for byte in buffer[0..<n] {
                // Progress bars redraw with a carriage return: that ends a line too.
                if byte == 0x0A || byte == 0x0D {
                    if !pending.isEmpty {
                        let line = String(decoding: pending, as: UTF8.self)
                        lines.append(line)
                        onLine(line)
                        pending.removeAll(keepingCapacity: true)
                    }
                } else {
                    pending.append(byte)
                }
            }
        }
        if !pending.isEmpty {
            let line = String(decoding: pending, as: UTF8.self)
            lines.append(line)
            onLine(line)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw SystemCallError.last("waiting for", path) }
        }
        let exited = status & 0x7f == 0
        return Outcome(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), lines: lines, timedOut: timedOut)
    }

    private static func spawn(_ path: String, _ arguments: [String], environment: [String: String],
                              output: FileDescriptor) throws(SystemCallError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output.rawValue, 1)
        posix_spawn_file_actions_adddup2(&actions, output.rawValue, 2)
        var merged: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        for (key, value) in environment { merged[key] = value }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else { throw SystemCallError("starting", path, errno: Errno(rawValue: result)) }
        return pid
    }
}
