import Foundation

/// Builds the C examples against include/stagebox_client.h and the built libStageboxClientC.so.
public enum CExamples {
    public static var buildDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public static var repository: URL {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }

    /// The C compiler and its first arguments: /usr/bin/cc, or `STAGEBOX_TEST_CC` (words split at
    /// spaces) for a cross-built test bundle (tools/cross/test gives clang for aarch64).
    static var compiler: (path: String, arguments: [String]) {
        let words = (ProcessInfo.processInfo.environment["STAGEBOX_TEST_CC"] ?? "").split(separator: " ").map(String.init)
        guard let first = words.first else { return ("/usr/bin/cc", []) }
        return (first, Array(words.dropFirst()))
    }

    /// Compiles examples/c/NAME.c into a temporary executable; returns its path.
    public static func build(_ name: String) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(6))").path
        let lib = buildDirectory.path
        let cc = compiler
        let r = try run(cc.path, cc.arguments + ["-Wall", "-Wextra", "-Werror", "-I", repository.appendingPathComponent("include").path,
                                                 repository.appendingPathComponent("examples/c/\(name).c").path,
                                                 "-L", lib, "-lStageboxClientC", "-lm", "-Wl,-rpath,\(lib)", "-o", output])
        guard r.status == 0 else { throw CompileError(output: r.output) }
        return output
    }

    public struct CompileError: Error { public let output: String }

    public static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = readToEnd(pipe.fileHandleForReading.fileDescriptor)
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

