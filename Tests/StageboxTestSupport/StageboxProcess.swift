import Foundation

/// Runs the `stagebox` binary built next to the test bundle, or the one `STAGEBOX_BINARY`
/// names (tools/test points it at the fully static release build from tools/build-static).
public struct StageboxProcess {
    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var seconds: Double
    }

    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["STAGEBOX_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("stagebox")
    }

    public static func run(_ arguments: [String], environment: [String: String] = [:],
                    timeout: TimeInterval = 60) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let start = Date()
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = [UInt8](), errData = [UInt8]()
        group.enter()
        DispatchQueue.global().async { outData = readToEnd(out.fileHandleForReading.fileDescriptor); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = readToEnd(err.fileHandleForReading.fileDescriptor); group.leave() }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            group.wait()
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self), seconds: Date().timeIntervalSince(start))
    }
}

/// A fresh temporary folder, removed by `remove()`.
public struct Scratch {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        return path(name)
    }

    /// A script or program to run: written through a descriptor that closes on exec, so that
    /// no child another test starts meanwhile holds it open for writing (its exec would then
    /// fail with "Text file busy").
    @discardableResult
    public func writeExecutable(_ name: String, _ text: String) throws -> String {
        let fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw POSIXError(.EIO)
        }
        return path(name)
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}
