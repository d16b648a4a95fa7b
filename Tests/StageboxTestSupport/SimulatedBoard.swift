import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `stagebox run --simulate` child process with its bus on a private socket.
public final class SimulatedBoard {
    public let scratch: Scratch
    public let socket: String
    public let process = Process()
    private let log = Pipe()

    /// - Parameters:
    ///   - speed: how many times faster than real time the simulated codec clock runs.
    ///   - config: more TOML, appended to the board's file.
    ///   - arguments: more arguments for `stagebox run`.
    ///   - realtimePriority: the audio thread's SCHED_FIFO priority (0 = normal scheduling).
    ///   - environment: more environment variables for the board.
    ///   - socketPath: the bus socket (default: in the board's scratch folder); a board started
    ///     where a killed one listened stands for the bus restarting.
    public init(speed: Double = 1, config: String = "", arguments: [String] = [], realtimePriority: Int = 0,
         environment: [String: String] = [:], socketPath: String? = nil) throws {
        scratch = try Scratch()
        socket = socketPath ?? scratch.path("bus.sock")
        let file = try scratch.write("board.toml", """
            [audio]
            rt_priority = \(realtimePriority)

            [bus]
            socket = "\(socket)"
            \(config)
            """)
        process.executableURL = StageboxProcess.binary
        process.arguments = ["run", "--simulate", "--config", file, "--speed", "\(speed)"] + arguments
        process.standardError = log
        process.standardOutput = Pipe()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        try process.run()
        // Up to 30 s: with every suite running at once on a shared 2-core machine, a start has
        // taken over 2 s. A board that exits (a refused configuration) ends the wait at once.
        for _ in 0..<3000 where !FileManager.default.fileExists(atPath: socket) && process.isRunning {
            usleep(10_000)
        }
    }

    public func stagebox(_ arguments: [String]) throws -> StageboxProcess.Result {
        try StageboxProcess.run(arguments + ["--socket", socket])
    }

    /// Starts a `stagebox` client command against this board and returns it running.
    public func start(_ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = StageboxProcess.binary
        p.arguments = arguments + ["--socket", socket]
        p.standardOutput = Pipe()
        p.standardError = Pipe()
        try p.run()
        return p
    }

    /// Descriptors the board process has open.
    public var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
    }

    public var isRunning: Bool { process.isRunning }

    public func stop() -> String {
        process.interrupt()
        process.waitUntilExit()
        scratch.remove()
        return readTextToEnd(log.fileHandleForReading.fileDescriptor)
    }
}

/// What a finished child process printed.
public func output(of process: Process) -> (stdout: String, stderr: String) {
    let out = (process.standardOutput as? Pipe).map { readTextToEnd($0.fileHandleForReading.fileDescriptor) } ?? ""
    let err = (process.standardError as? Pipe).map { readTextToEnd($0.fileHandleForReading.fileDescriptor) } ?? ""
    return (out, err)
}

/// Polls `condition` every 50 ms for up to `seconds`; true as soon as it holds.
public func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}
