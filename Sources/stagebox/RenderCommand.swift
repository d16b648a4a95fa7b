import StageboxAppliance
import ArgumentParser
import StageboxPortRules
import Logging
import StageboxAudioFiles
import StageboxDrivers
import StageboxConfig

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Run the engine offline: the codec inputs from an audio file, the codec outputs to a WAV file.",
        discussion: """
            The input may be any file this build's libsndfile reads (WAV, AIFF, AU, CAF, …; FLAC and Ogg \
            where libsndfile has its codec libraries, as Debian's has and the static binary's has not). It is converted to the \
            configuration's rate, and its channels are mapped onto the codec inputs as connections map them \
            (equal counts, mono to all, all to mono). The output is a WAV at the configuration's rate with its \
            output channels, in the input's sample encoding where WAV has it (16, 24 or 32-bit integers, \
            float), else the nearest that holds every sample (8-bit, µ-law and A-law, ADPCM: 16-bit; \
            double, Vorbis, Opus, MP3: float); it is written beside the output and put in place \
            only when the whole input is rendered, so a failed render never leaves half a file.
            """)

    @Option(help: ArgumentHelp("The configuration file.",
                               discussion: "Without it: the built-in defaults at the input's rate and channel count, "
                                   + "codec.in connected to codec.out (a format conversion)."))
    var config: String?
    @Option(help: "The audio file the codec inputs read.") var input: String
    @Option(help: "The WAV file the codec outputs write (not the input).") var output: String

    func run() throws {
        let configuration: StageboxConfiguration
        let file: String
        if let config {
            do {
                configuration = try ConfigLoader.load(path: config)
            } catch {
                // Every problem, connections too, as check-config prints them.
                printError(CheckConfigCommand.problems(in: config).map(\.description).joined(separator: "\n"))
                throw ExitCode(1)
            }
            file = config
        } else {
            do {
                configuration = try Self.defaults(for: input)
            } catch {
                printError("stagebox render: \(error)")
                throw ExitCode(1)
            }
            file = "the built-in defaults"
        }
        let (engine, problems) = EngineBuilder.make(configuration, file: file)
        if !problems.isEmpty {
            printError(problems.map(\.description).joined(separator: "\n"))
            throw ExitCode(1)
        }
        // (A Character search: String.contains(String) would link Foundation's, and ICU with it.)
        let folder = output.lastIndex(of: "/").map { String(output[..<$0]) } ?? "."
        var st = stat()
        if !folder.isEmpty && (stat(folder, &st) != 0 || (st.st_mode & S_IFMT) != S_IFDIR) {
            printError("stagebox render: \(output): the folder \(folder) does not exist")
            throw ExitCode(1)
        }
        let control = DriverControl()
        StopSignals.install()
        let driver = OfflineDriver(engine: engine, control: control,
                                   inputPath: input, outputPath: output)
        var logger = Logger(label: "render")
        logger.logLevel = .critical // render speaks through its own lines
        do {
            try DriverSupervisor(driver: driver, logger: logger).run {
                if StopSignals.stopRequested { control.requestStop() }
                return true
            }
            print("rendered \(driver.framesRendered) frames to \(output)")
        } catch {
            printError("stagebox render: \(error)")
            throw ExitCode(1)
        }
    }

    /// The built-in defaults fitted to the input: its rate and channel count, inputs to outputs.
    static func defaults(for input: String) throws(AudioFileError) -> StageboxConfiguration {
        var st = stat()
        if stat(input, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG && (st.st_mode & S_IFMT) != S_IFDIR {
            // Its rate and channels are read first, then the audio: a stream cannot be read twice.
            throw AudioFileError(path: input, message: "is a pipe or a device, which render reads once only; "
                                 + "give --config (its [audio] rate and inputs), or a file")
        }
        let reader = try AudioFileReader(path: input)
        if let note = reader.headerNote { printError("stagebox render: \(input): \(note)") }
        var configuration = StageboxConfiguration.defaults
        guard AudioSection.rateRange.contains(reader.sampleRate) else {
            throw AudioFileError(path: input, message: "is at \(reader.sampleRate) Hz; without --config the engine runs "
                                 + "at the file's rate, from \(AudioSection.rateRange.lowerBound) to \(AudioSection.rateRange.upperBound) Hz")
        }
        let range = PortRules.channelRange
        guard range.contains(reader.channels) else {
            throw AudioFileError(path: input, message: "has \(reader.channels) channels; Stagebox ports have "
                                 + "\(range.lowerBound) to \(range.upperBound)")
        }
        configuration.audio.rate = reader.sampleRate
        configuration.audio.inputs = reader.channels
        configuration.audio.outputs = reader.channels
        return configuration
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
