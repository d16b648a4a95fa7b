import Foundation
import StageboxAudioFiles
import StageboxTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// ALSA programs nobody here wrote (aplay, arecord, speaker-test, sox) and the test's own
/// pcm-probe, run against a simulated board through the built plugin: a private HOME whose
/// .asoundrc loads `libasound_module_pcm_stagebox.so` from the build and includes the
/// `pcm.stagebox` definition tools/setup installs.
struct ALSAPrograms {
    let home: Scratch
    let environment: [String: String]

    init(board: SimulatedBoard) throws {
        home = try Scratch()
        let build = CExamples.buildDirectory.path
        let conf = CExamples.repository.appendingPathComponent("Sources/StageboxALSAPlugin/50-stagebox.conf").path
        try home.write(".asoundrc", """
            pcm_type.stagebox { lib "\(build)/libasound_module_pcm_stagebox.so" }
            <\(conf)>

            """)
        environment = ["HOME": home.url.path, "STAGEBOX_SOCKET": board.socket]
    }

    struct Result {
        var status: Int32
        var output: String
        var seconds: Double
    }

    /// Runs `program` (a PATH name, or pcm-probe from the build) to its end, or kills it after
    /// `timeout` seconds; its stdout and stderr together.
    func run(_ program: String, _ arguments: [String], timeout: Double = 120) throws -> Result {
        let p = try start(program, arguments)
        let started = Date()
        let pipe = p.standardOutput as! Pipe
        nonisolated(unsafe) var data = [UInt8]()
        let reader = Thread { data = readToEnd(pipe.fileHandleForReading.fileDescriptor) }
        reader.start()
        while p.isRunning && Date().timeIntervalSince(started) < timeout { usleep(20_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        while !reader.isFinished { usleep(5_000) }
        return Result(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self),
                      seconds: Date().timeIntervalSince(started))
    }

    /// Starts `program` with stdout and stderr into one pipe.
    func start(_ program: String, _ arguments: [String]) throws -> Process {
        let p = Process()
        if program == "pcm-probe" {
            p.executableURL = CExamples.buildDirectory.appendingPathComponent("pcm-probe")
        } else {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        }
        p.arguments = program == "pcm-probe" ? arguments : [program] + arguments
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        return p
    }

    func remove() { home.remove() }
}

/// `key=value` lines as a dictionary of numbers.
func figures(_ text: String) -> [String: Double] {
    var out: [String: Double] = [:]
    for line in text.split(separator: "\n") {
        let parts = line.split(separator: "=", maxSplits: 1)
        if parts.count == 2, let v = Double(parts[1]) { out[String(parts[0])] = v }
    }
    return out
}

/// A sine WAV file: `seconds` of `frequency` at `rate`, 16-bit, half scale.
func writeSine(_ path: String, rate: Int, channels: Int, frequency: Double, seconds: Double) throws {
    let writer = try AudioFileWriter(path: path, sampleRate: rate, channels: channels, encoding: .pcm16)
    let frames = Int(seconds * Double(rate))
    var samples = [Float](repeating: 0, count: frames * channels)
    for i in 0..<frames {
        let x = Float(0.5 * sin(2 * Double.pi * frequency * Double(i) / Double(rate)))
        for c in 0..<channels { samples[i * channels + c] = x }
    }
    try writer.write(samples)
    try writer.close()
}

/// The first channel's sounding part (above `threshold`, -40 dBFS by default, from the first such
/// sample to the last): its length in seconds and its frequency from the upward zero crossings.
func sounding(_ path: String, threshold: Float = 0.01) throws -> (seconds: Double, frequency: Double) {
    let reader = try AudioFileReader(path: path)
    let all = try reader.readAll()
    let channels = reader.channels, rate = Double(reader.sampleRate)
    let left = stride(from: 0, to: all.count, by: channels).map { all[$0] }
    guard let first = left.firstIndex(where: { abs($0) > threshold }), let last = left.lastIndex(where: { abs($0) > threshold })
    else { return (0, 0) }
    var crossings: [Double] = []
    for i in (first + 1)...last where left[i - 1] < 0 && left[i] >= 0 {
        crossings.append(Double(i - 1) + Double(-left[i - 1] / (left[i] - left[i - 1])))
    }
    let frequency = crossings.count > 1 ? Double(crossings.count - 1) * rate / (crossings.last! - crossings.first!) : 0
    return (Double(last - first + 1) / rate, frequency)
}
