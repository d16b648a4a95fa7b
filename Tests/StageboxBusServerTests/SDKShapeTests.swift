import Foundation
import StageboxClient
import Testing

final class CountingObserver: AgoraAudioFrameObserver, @unchecked Sendable {
    // @unchecked: written by the observer thread only, read once the observer is removed (joined).
    var frames = 0
    var peak: Int16 = 0
    func onPlaybackAudioFrame(_ frame: AgoraAudioFrame) -> Bool {
        frames += frame.samplesPerChannel
        for i in 0..<(frame.samplesPerChannel * frame.channels) { peak = max(peak, abs(frame.buffer[i])) }
        return true
    }
}

extension BusTests {
    @Suite struct SDKShapeTests {
        @Test func vonageCaptureReachesAnAgoraSink() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let client = try bus.client("call")
            let device = VonageAudioDevice(client: client, captureSettings: .init(sampleRate: 48000, numChannels: 1),
                                           renderSettings: .init(sampleRate: 16000, numChannels: 1))
            try device.startCapture()
            try device.startRendering()
            let agora = AgoraExternalAudio(client: client)
            try agora.enableExternalAudioSink(sampleRate: 16000, channels: 1)
            try agora.enableExternalAudioSource(sampleRate: 32000, channels: 2)
            try client.connect(from: device.captureBusName!, to: agora.sinkPort!.name)
            try client.connect(from: device.captureBusName!, to: device.renderBusName!)
            let observer = CountingObserver()
            try agora.setPlaybackAudioFrameObserver(observer)

            // Capture a 1 kHz tone at half scale, 10 ms at a time, for half a second.
            var phase = 0.0
            var block = [Int16](repeating: 0, count: 480)
            for _ in 0..<50 {
                for i in 0..<480 { block[i] = Int16(16384 * sin(phase)); phase += 2 * .pi * 1000 / 48000 }
                block.withUnsafeBufferPointer { #expect(device.writeCaptureData($0.baseAddress!, count: 480) == 480) }
                usleep(10_000)
            }
            try agora.setPlaybackAudioFrameObserver(nil)
            #expect(observer.frames > 4000, "the observer got 10 ms frames at 16 kHz")
            #expect(observer.peak > 14000 && observer.peak < 18000, "the tone arrived at its level (peak \(observer.peak))")

            // The render side hands out 16 kHz audio of the same tone.
            var rendered = [Int16](repeating: 0, count: 160)
            var peak: Int16 = 0
            for _ in 0..<5 {
                rendered.withUnsafeMutableBufferPointer { _ = device.readRenderData($0.baseAddress!, count: 160) }
                peak = max(peak, rendered.map { abs($0) }.max()!)
            }
            #expect(peak > 14000, "render peak \(peak)")

            // Pushing to the Agora source and pulling whole frames work; a broken length is refused.
            var stereo = [Int16](repeating: 1000, count: 320 * 2)
            #expect(stereo.withUnsafeBufferPointer { agora.pushExternalAudioFrame($0.baseAddress!, samples: 320, timestamp: 0) } == 0)
            #expect(stereo.withUnsafeMutableBytes { agora.pullPlaybackAudioFrame(into: $0.baseAddress!, lengthInBytes: 320) })
            #expect(!stereo.withUnsafeMutableBytes { agora.pullPlaybackAudioFrame(into: $0.baseAddress!, lengthInBytes: 321) })
            #expect(device.captureBusName == "call.capture" && device.renderBusName == "call.render")
        }
    }
}
