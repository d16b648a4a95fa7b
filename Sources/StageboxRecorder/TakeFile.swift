import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One WAV file of a take, written so that a power cut loses at most one sync interval.
///
/// Stagebox writes its own WAV rather than through libsndfile because the take needs what
/// libsndfile's writer cannot give while the file grows: cue points added during the take in a
/// header that never moves the samples, and header updates followed by `fdatasync`.
public final class TakeFile {
    public let path: String
    public let format: TakeFormat
    private let fd: FileDescriptor
    private var header: TakeHeader
    private let rf64Threshold: UInt64
    private var scratch: [UInt8] = []
    private var closed = false
    /// Bytes of samples written (whole frames).
    public private(set) var dataBytes: UInt64 = 0

    /// Creates the file (never over an existing one), writes its header and makes both the
    /// file and its directory entry durable before the first sample.
    ///
    /// - Parameter rf64Threshold: the RIFF size above which the header becomes RF64: 4 GiB
    ///   but 1 byte; tests lower it to see the upgrade without writing 4 GiB.
    public init(path: String, format: TakeFormat, bext: BroadcastInfo,
                rf64Threshold: UInt64 = UInt64(UInt32.max)) throws(SystemCallError) {
        self.path = path
        self.format = format
        self.rf64Threshold = rf64Threshold
        header = TakeHeader(format: format, bext: bext)
        fd = try SystemCallError.naming("creating", path) {
            try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                                    permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        do throws(SystemCallError) {
            try writeHeader()
            if fdatasync(fd.rawValue) != 0 { throw SystemCallError.last("fdatasync", path) }
            try WholeFile.syncDirectory(of: path)
        } catch {
            closed = true // deinit runs after a failed init too: the descriptor is closed once
            try? fd.close()
            unlink(path)
            throw error
        }
    }

    deinit { if !closed { try? fd.close() } }

    public var frames: Int64 { Int64(dataBytes) / Int64(format.bytesPerFrame) }
    public var fileBytes: UInt64 { UInt64(header.dataOffset) + dataBytes }
    public var isRF64: Bool { header.isRF64 }
    public var cueCount: Int { header.cues.count }

    /// Appends `frames` interleaved frames. On a failed write (a full disk) the file is cut back
    /// to the last whole frame, its header made to match, and the error thrown: the file stays
    /// valid.
    public func append(_ samples: UnsafePointer<Float>, frames: Int) throws(SystemCallError) {
        guard frames > 0 else { return }
        format.encode(samples, count: frames * format.channels, into: &scratch)
        do {
            let written = try scratch.withUnsafeBytes { raw in
                try fd.writeAll(toAbsoluteOffset: Int64(header.dataOffset) + Int64(dataBytes), raw)
            }
            dataBytes += UInt64(written)
        } catch {
            let failure = SystemCallError("writing", path, errno: error as? Errno ?? .ioError)
            _ = ftruncate(fd.rawValue, off_t(fileBytes))
            try? sync()
            throw failure
        }
    }

    /// Drops a cue point at `frame` with `label`; false when the header has no room for more.
    @discardableResult
    public func addCue(frame: Int64, label: String) -> Bool { header.addCue(frame: frame, label: label) }

    /// Makes what was written durable: the samples first, then the header that counts them, so
    /// that no filesystem (one without ext4's ordering, a FAT card) can keep a header that
    /// counts samples it lost.
    public func sync() throws(SystemCallError) {
        if fdatasync(fd.rawValue) != 0 { throw .last("fdatasync", path) }
        try writeHeader()
        if fdatasync(fd.rawValue) != 0 { throw .last("fdatasync", path) }
    }

    /// Pads an odd data chunk, writes the final header, syncs and closes.
    public func close() throws(SystemCallError) {
        guard !closed else { return }
        closed = true
        defer { try? fd.close() }
        if dataBytes & 1 == 1 {
            _ = try? fd.writeAll(toAbsoluteOffset: Int64(fileBytes), [UInt8(0)])
        }
        try sync()
    }

    private func writeHeader() throws(SystemCallError) {
        header.setDataBytes(dataBytes, rf64Threshold: rf64Threshold)
        let bytes = header.bytes
        _ = try SystemCallError.naming("writing the header of", path) {
            try bytes.withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: 0, $0) }
        }
    }
}
