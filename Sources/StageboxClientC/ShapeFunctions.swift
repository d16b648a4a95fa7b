import StageboxClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

final class VonageHandle {
    let device: VonageAudioDevice
    var captureName: UnsafeMutablePointer<CChar>?
    var renderName: UnsafeMutablePointer<CChar>?
    init(_ device: VonageAudioDevice) { self.device = device }
    deinit { free(captureName); free(renderName) }
}

@_cdecl("stagebox_vonage_create")
public func stagebox_vonage_create(_ client: OpaquePointer?, _ captureRate: Int32, _ captureChannels: Int32,
                                   _ renderRate: Int32, _ renderChannels: Int32) -> OpaquePointer? {
    guard let client else { return nil }
    let c = borrow(client, as: ClientHandle.self).client
    return retain(VonageHandle(VonageAudioDevice(
        client: c, captureSettings: .init(sampleRate: Int(captureRate), numChannels: Int(captureChannels)),
        renderSettings: .init(sampleRate: Int(renderRate), numChannels: Int(renderChannels)))))
}

@_cdecl("stagebox_vonage_start_capture")
public func stagebox_vonage_start_capture(_ device: OpaquePointer?) -> Int32 {
    guard let device else { return -1 }
    let h = borrow(device, as: VonageHandle.self)
    do { try h.device.startCapture() } catch { return -1 }
    if h.captureName == nil, let n = h.device.captureBusName { h.captureName = strdup(n) }
    return 0
}

@_cdecl("stagebox_vonage_stop_capture")
public func stagebox_vonage_stop_capture(_ device: OpaquePointer?) -> Int32 {
    guard let device else { return -1 }
    borrow(device, as: VonageHandle.self).device.stopCapture()
    return 0
}

@_cdecl("stagebox_vonage_start_rendering")
public func stagebox_vonage_start_rendering(_ device: OpaquePointer?) -> Int32 {
    guard let device else { return -1 }
    let h = borrow(device, as: VonageHandle.self)
    do { try h.device.startRendering() } catch { return -1 }
    if h.renderName == nil, let n = h.device.renderBusName { h.renderName = strdup(n) }
    return 0
}

@_cdecl("stagebox_vonage_stop_rendering")
public func stagebox_vonage_stop_rendering(_ device: OpaquePointer?) -> Int32 {
    guard let device else { return -1 }
    borrow(device, as: VonageHandle.self).device.stopRendering()
    return 0
}

@_cdecl("stagebox_vonage_write_capture_data")
public func stagebox_vonage_write_capture_data(_ device: OpaquePointer?, _ samples: UnsafePointer<Int16>?, _ count: Int32) -> Int32 {
    guard let device, let samples, count >= 0 else { return -1 }
    return Int32(borrow(device, as: VonageHandle.self).device.writeCaptureData(samples, count: Int(count)))
}

@_cdecl("stagebox_vonage_read_render_data")
public func stagebox_vonage_read_render_data(_ device: OpaquePointer?, _ buffer: UnsafeMutablePointer<Int16>?, _ count: Int32) -> Int32 {
    guard let device, let buffer, count >= 0 else { return -1 }
    return Int32(borrow(device, as: VonageHandle.self).device.readRenderData(buffer, count: Int(count)))
}

@_cdecl("stagebox_vonage_capture_port")
public func stagebox_vonage_capture_port(_ device: OpaquePointer?) -> UnsafePointer<CChar>? {
    device.flatMap { borrow($0, as: VonageHandle.self).captureName.map { UnsafePointer($0) } }
}

@_cdecl("stagebox_vonage_render_port")
public func stagebox_vonage_render_port(_ device: OpaquePointer?) -> UnsafePointer<CChar>? {
    device.flatMap { borrow($0, as: VonageHandle.self).renderName.map { UnsafePointer($0) } }
}

@_cdecl("stagebox_vonage_destroy")
public func stagebox_vonage_destroy(_ device: OpaquePointer?) {
    if let device { release(device, as: VonageHandle.self) }
}

final class AgoraHandle {
    let agora: AgoraExternalAudio
    var sourceName: UnsafeMutablePointer<CChar>?
    var sinkName: UnsafeMutablePointer<CChar>?
    var observer: CPlaybackObserver?
    init(_ agora: AgoraExternalAudio) { self.agora = agora }
    deinit { try? agora.setPlaybackAudioFrameObserver(nil); free(sourceName); free(sinkName) }
}

/// Forwards Agora playback frames to a C function.
final class CPlaybackObserver: AgoraAudioFrameObserver, @unchecked Sendable {
    // @unchecked: an immutable C function and the context its caller gave for it, to be called
    // on the observer thread (as the header says).
    let function: @convention(c) (UnsafePointer<Int16>?, Int32, Int32, Int32, Int64, UnsafeMutableRawPointer?) -> Int32
    let context: UnsafeMutableRawPointer?

    init(function: @escaping @convention(c) (UnsafePointer<Int16>?, Int32, Int32, Int32, Int64, UnsafeMutableRawPointer?) -> Int32,
         context: UnsafeMutableRawPointer?) {
        self.function = function
        self.context = context
    }

    func onPlaybackAudioFrame(_ frame: AgoraAudioFrame) -> Bool {
        function(frame.buffer, Int32(frame.samplesPerChannel), Int32(frame.channels), Int32(frame.samplesPerSec),
                 frame.renderTimeMs, context) != 0
    }
}

@_cdecl("stagebox_agora_create")
public func stagebox_agora_create(_ client: OpaquePointer?) -> OpaquePointer? {
    guard let client else { return nil }
    return retain(AgoraHandle(AgoraExternalAudio(client: borrow(client, as: ClientHandle.self).client)))
}

@_cdecl("stagebox_agora_enable_external_audio_source")
public func stagebox_agora_enable_external_audio_source(_ agora: OpaquePointer?, _ rate: Int32, _ channels: Int32) -> Int32 {
    guard let agora else { return -1 }
    let h = borrow(agora, as: AgoraHandle.self)
    do { try h.agora.enableExternalAudioSource(sampleRate: Int(rate), channels: Int(channels)) } catch { return -1 }
    if let n = h.agora.sourcePort?.name { free(h.sourceName); h.sourceName = strdup(n) }
    return 0
}

@_cdecl("stagebox_agora_push_external_audio_frame")
public func stagebox_agora_push_external_audio_frame(_ agora: OpaquePointer?, _ data: UnsafePointer<Int16>?, _ samples: Int32,
                                                     _ timestamp: Int64) -> Int32 {
    guard let agora, let data, samples >= 0 else { return -1 }
    return borrow(agora, as: AgoraHandle.self).agora.pushExternalAudioFrame(data, samples: Int(samples), timestamp: timestamp)
}

@_cdecl("stagebox_agora_enable_external_audio_sink")
public func stagebox_agora_enable_external_audio_sink(_ agora: OpaquePointer?, _ rate: Int32, _ channels: Int32) -> Int32 {
    guard let agora else { return -1 }
    let h = borrow(agora, as: AgoraHandle.self)
    do { try h.agora.enableExternalAudioSink(sampleRate: Int(rate), channels: Int(channels)) } catch { return -1 }
    if let n = h.agora.sinkPort?.name { free(h.sinkName); h.sinkName = strdup(n) }
    return 0
}

@_cdecl("stagebox_agora_pull_playback_audio_frame")
public func stagebox_agora_pull_playback_audio_frame(_ agora: OpaquePointer?, _ data: UnsafeMutableRawPointer?, _ length: Int32) -> Int32 {
    guard let agora, let data, length >= 0 else { return -1 }
    return borrow(agora, as: AgoraHandle.self).agora.pullPlaybackAudioFrame(into: data, lengthInBytes: Int(length)) ? 0 : -1
}

@_cdecl("stagebox_agora_set_playback_observer")
public func stagebox_agora_set_playback_observer(
    _ agora: OpaquePointer?,
    _ function: (@convention(c) (UnsafePointer<Int16>?, Int32, Int32, Int32, Int64, UnsafeMutableRawPointer?) -> Int32)?,
    _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let agora else { return -1 }
    let h = borrow(agora, as: AgoraHandle.self)
    h.observer = function.map { CPlaybackObserver(function: $0, context: context) }
    do { try h.agora.setPlaybackAudioFrameObserver(h.observer) } catch {
        h.observer = nil
        return -1
    }
    return 0
}

@_cdecl("stagebox_agora_source_port")
public func stagebox_agora_source_port(_ agora: OpaquePointer?) -> UnsafePointer<CChar>? {
    agora.flatMap { borrow($0, as: AgoraHandle.self).sourceName.map { UnsafePointer($0) } }
}

@_cdecl("stagebox_agora_sink_port")
public func stagebox_agora_sink_port(_ agora: OpaquePointer?) -> UnsafePointer<CChar>? {
    agora.flatMap { borrow($0, as: AgoraHandle.self).sinkName.map { UnsafePointer($0) } }
}

@_cdecl("stagebox_agora_destroy")
public func stagebox_agora_destroy(_ agora: OpaquePointer?) {
    if let agora { release(agora, as: AgoraHandle.self) }
}
