import CSndFile
import Foundation
import StageboxAudioFiles

/// A fresh directory under the temporary one, removed by the caller.
func temporaryDirectory(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-\(name)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Values every encoding holds exactly (multiples of 2^-15), interleaved.
func testSignal(frames: Int, channels: Int, seed: Int = 0) -> [Float] {
    (0..<frames * channels).map { Float((($0 + seed) * 7919) % 65536 - 32768) / 32768 }
}

/// What sox says of a file: its frames (`sox --i -s`), or nil when sox cannot read it.
func soxFrames(_ path: String) -> Int? {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
    p.arguments = ["--i", "-s", path]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = Pipe()
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { return nil }
    return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
}

/// What sox says on stderr when it reads a file's header (warnings about its chunks).
func soxWarnings(_ path: String) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
    p.arguments = ["--i", path]
    p.standardOutput = Pipe()
    let err = Pipe()
    p.standardError = err
    guard (try? p.run()) != nil else { return "sox did not run" }
    let data = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// The cue points libsndfile reads in a file: their sample offsets.
func libsndfileCues(_ path: String) -> [UInt32] {
    var info = SF_INFO()
    guard let file = sf_open(path, Int32(SFM_READ), &info) else { return [] }
    defer { sf_close(file) }
    var cues = SF_CUES()
    guard sf_command(file, Int32(SFC_GET_CUE), &cues, Int32(MemoryLayout<SF_CUES>.size)) == Int32(SF_TRUE) else { return [] }
    return withUnsafeBytes(of: cues.cue_points) { raw in
        let points = raw.bindMemory(to: SF_CUE_POINT.self)
        return (0..<Int(cues.cue_count)).map { points[$0].sample_offset }
    }
}

/// The broadcast (bext) chunk libsndfile reads: its origination date and time reference.
func libsndfileBroadcast(_ path: String) -> (date: String, time: String, timeReference: UInt64)? {
    var info = SF_INFO()
    guard let file = sf_open(path, Int32(SFM_READ), &info) else { return nil }
    defer { sf_close(file) }
    var bext = SF_BROADCAST_INFO()
    guard sf_command(file, Int32(SFC_GET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == Int32(SF_TRUE) else { return nil }
    let date = withUnsafeBytes(of: bext.origination_date) { String(decoding: $0.prefix(10), as: UTF8.self) }
    let time = withUnsafeBytes(of: bext.origination_time) { String(decoding: $0.prefix(8), as: UTF8.self) }
    return (date, time, UInt64(bext.time_reference_high) << 32 | UInt64(bext.time_reference_low))
}

func fileLength(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? -1
}

/// Appends raw bytes to a file, as a write the header never heard of.
func appendBytes(_ path: String, _ bytes: [UInt8]) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
}

/// What wavinfo (PyPI; a reader nobody here wrote, installed by tools/setup into
/// ~/.cache/stagebox-py) reads of a take's iXML and bext, as JSON; nil when it cannot.
func wavinfoMetadata(_ path: String) -> [String: Any]? {
    let python = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/stagebox-py/bin/python3").path
    let script = """
        import json, sys
        from wavinfo import WavInfoReader
        w = WavInfoReader(sys.argv[1])
        x = w.ixml
        print(json.dumps({
            "project": x.project, "scene": x.scene, "take": x.take, "tape": x.tape,
            "note": x.raw_xml.findtext("NOTE"),
            "tracks": [t.name for t in x.track_list],
            "ixml_lo": x.raw_xml.findtext("SPEED/TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO"),
            "description": w.bext.description, "time_reference": w.bext.time_reference,
            "originator": w.bext.originator, "frames": w.data.frame_count}))
        """
    let p = Process()
    p.executableURL = URL(fileURLWithPath: python)
    p.arguments = ["-c", script, path]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        print("wavinfo on \(path): \(String(decoding: data, as: UTF8.self))")
        return nil
    }
    return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
}
