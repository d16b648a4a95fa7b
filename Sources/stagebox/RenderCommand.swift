import ArgumentParser
import StageboxDrivers
import StageboxConfig

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Run the engine offline: the codec inputs from a WAV file, the codec outputs to a WAV file.")

    @Option(help: "The configuration file.") var config: String
    @Option(help: "The WAV file the codec inputs read.") var input: String
    @Option(help: "The WAV file the codec outputs write.") var output: String

    func run() throws {
        let configuration: StageboxConfiguration
        do {
            configuration = try ConfigLoader.load(path: config)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        let (engine, problems) = EngineBuilder.make(configuration, file: config)
        if !problems.isEmpty {
            printError(problems.map(\.description).joined(separator: "\n"))
            throw ExitCode(1)
        }
        do {
            let frames = try OfflineDriver.render(engine: engine, period: configuration.audio.period,
                                                  inputPath: input, outputPath: output)
            print("rendered \(frames) frames to \(output)")
        } catch {
            printError("stagebox render: \(error)")
            throw ExitCode(1)
        }
    }
}

func printError(_ text: String) {
    var stderr = StandardError()
    print(text, to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { writeStandardError($0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private func writeStandardError(_ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(2, bytes, count)
}
