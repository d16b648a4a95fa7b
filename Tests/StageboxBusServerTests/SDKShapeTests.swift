import Foundation
import StageboxClient
import Testing

final class CountingObserver: AgoraAudioFrameObserver, @unchecked Sendable {
    // @unchecked: written by the observer thread only, read once the observer is removed (joined).
    var frames = 0
    /// Each 10 ms frame's peak.
    var peaks: [Int16] = []
    func onPlaybackAudioFrame(_ frame: AgoraAudioFrame) -> Bool {
        frames += frame.samplesPerChannel
        var peak: Int16 = 0
        for i in 0..<(frame.samplesPerChannel * frame.channels) { peak = max(peak, abs(frame.buffer[i])) }
        peaks.append(peak)
        return true
    }

    /// The level the tone arrived at: the median peak of the frames that carry it. A starved
    /// machine leaves counted gaps in the capture, and the resampler's filter rings at a gap's
    /// edges, so the few frames there say nothing about the level.
    var typicalPeak: Int16 {
        let loud = peaks.filter { $0 > 1000 }.sorted()
        return loud.isEmpty ? 0 : loud[loud.count / 2]
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
            #expect(observer.typicalPeak > 14000 && observer.typicalPeak < 18000,
                    "the tone arrived at its level (frame peaks \(observer.peaks))")
            // Even at a gap's edge the filter's ringing stays near the level (a full-scale value
            // would be a wrong sample, not ringing).
            #expect(observer.peaks.allSatisfy { Int($0) < 16384 * 13 / 10 }, "frame peaks \(observer.peaks)")

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
