import CSndFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads any audio file libsndfile reads (WAV, FLAC, AIFF, Ogg, …; 8- to 32-bit PCM, float)
/// as Float32, any channel count. Integer samples are scaled by Stagebox (bit-exact).
public final class AudioFileReader {
    public let path: String
    public let sampleRate: Int
    public let channels: Int
    /// Frames the file holds.
    public let frames: Int
    /// The encoding a copy of this file is written in: the file's own where a WAV can hold it,
    /// else the nearest that keeps every sample (8-bit → 16-bit, compressed or double → float).
    public let encoding: AudioFileEncoding
    /// libsndfile's name of the container and of the encoding ("FLAC (Free Lossless Audio Codec)", "Signed 16 bit PCM").
    public let formatDescription: String
    /// What libsndfile noticed of a header that does not match the file (a WAV written to a
    /// pipe claims 2 GB; one cut short claims more than it holds): it reads what is there.
    public let headerNote: String?
    private let file: OpaquePointer
    private var scratch: [Int32] = []

    public init(path: String) throws(AudioFileError) {
        self.path = path
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(path: path, message: Self.openProblem(path))
        }
        let major = info.format & Int32(SF_FORMAT_TYPEMASK)
        let subtype = info.format & Int32(SF_FORMAT_SUBMASK)
        let encoding = AudioFileEncoding(subtype: subtype) ?? AudioFileEncoding.nearest(to: subtype)
        guard info.channels > 0 && info.samplerate > 0 else {
            sf_close(file)
            throw AudioFileError(path: path, message: "has \(info.channels) channels at \(info.samplerate) Hz: "
                                 + "not audio Stagebox can play")
        }
        headerNote = Self.headerProblem(file)
        self.file = file
        self.sampleRate = Int(info.samplerate)
        self.channels = Int(info.channels)
        self.frames = Int(info.frames)
        self.encoding = encoding
        formatDescription = "\(Self.formatName(major)), \(Self.formatName(subtype))"
    }

    deinit { sf_close(file) }

    /// Why a file would not open, in words: it is missing, unreadable, or not audio.
    private static func openProblem(_ path: String) -> String {
        if access(path, F_OK) != 0 { return "no such file" }
        if access(path, R_OK) != 0 { return "not readable (permission denied)" }
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { return "a directory, not an audio file" }
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0 { return "an empty file, not an audio file" }
        return "not an audio file this build can read (libsndfile: \(String(cString: sf_strerror(nil))))"
    }

    /// libsndfile's name of a file format or sample encoding ("AIFF (Apple/SGI)", "Signed 8 bit PCM").
    static func formatName(_ format: Int32) -> String {
        var info = SF_FORMAT_INFO()
        info.format = format
        if sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0, let name = info.name {
            return String(cString: name)
        }
        return "format 0x\(String(format, radix: 16))"
    }

    /// libsndfile reads on through a header that lies about the data size; its log says so.
    /// (Not a refusal: sox's WAVs written to a pipe claim 2 GB, and every reader plays them.)
    private static func headerProblem(_ file: OpaquePointer) -> String? {
        var log = [CChar](repeating: 0, count: 4096)
        sf_command(file, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let l = line.lowercased()
            // An odd data chunk (24-bit mono, an odd number of frames) is valid RIFF: its pad
            // byte follows it; libsndfile only remarks on it.
            if l.contains("even number of bytes") { continue }
            if l.contains("truncated") || l.contains("should be") || l.contains("greater than") {
                return "its header does not match the file (libsndfile: " + line.trimmingCharacters()
                    + "); reading the audio that is there"
            }
        }
        return nil
    }

    /// Reads up to `frames` interleaved frames into `buffer` (room for frames × channels);
    /// returns how many were read (0 at the end of the file).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let n: Int
        if encoding == .float32 {
            n = Int(sf_readf_float(file, buffer, sf_count_t(frames)))
        } else {
            let samples = frames * channels
            if scratch.count < samples { scratch = [Int32](repeating: 0, count: samples) }
            n = scratch.withUnsafeMutableBufferPointer { Int(sf_readf_int(file, $0.baseAddress, sf_count_t(frames))) }
            for i in 0..<(n * channels) { buffer[i] = SampleScaling.toFloat(scratch[i]) }
        }
        if n < 0 || sf_error(file) != 0 {
            throw AudioFileError(path: path, message: "read failed: " + String(cString: sf_strerror(file)))
        }
        return n
    }

    /// Reads the whole file as interleaved Float32.
    public func readAll() throws(AudioFileError) -> [Float] {
        var all = [Float](repeating: 0, count: frames * channels)
        var done = 0
        while done < frames {
            let n = try all.withMutableBuffer { p throws(AudioFileError) in
                try read(into: p.baseAddress! + done * channels, frames: frames - done)
            }
            if n == 0 { break }
            done += n
        }
        if done < frames {
            throw AudioFileError(path: path, message: "truncated: the header says \(frames) frames, "
                                 + "the file holds \(done)")
        }
        return all
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
