import StageboxTestSupport
import CALSA
import Foundation
import Testing
import StageboxEngine
@testable import StageboxDrivers
import StageboxSystem

@Suite struct ALSADriverTests {
    init() { stagebox_alsa_silence_errors() }

    @Test(arguments: [SampleFormat.s16, .s24Packed, .s32], [64, 128, 256])
    func passthroughIsBitExact(format: SampleFormat, period: Int) throws {
        let frames = period * 40
        let stimulus = ALSATestRig.stimulus(format: format, frames: frames, channels: 2)
        let rig = try ALSATestRig(inputBytes: stimulus)
        defer { rig.remove() }
        let control = DriverControl(frameLimit: frames)
        let p = ALSATestRig.parameters(format: format)
        let driver = ALSADriver(parameters: p, engine: try .passthrough(period: period), control: control,
                                pacing: .free, config: rig.config)
        try driver.open()
        #expect(driver.run() == nil)
        driver.close()
        #expect(!driver.isLinked, "file plugins cannot be linked")
        let out = try rig.outputBytes()
        let frameBytes = 2 * format.bytesPerSample
        let prefill = period * p.periods * frameBytes
        #expect(out.count == prefill + frames * frameBytes)
        #expect(out.prefix(prefill).allSatisfy { $0 == 0 }, "the pre-fill is silence")
        #expect(firstDifference(Array(out.dropFirst(prefill)), stimulus) == nil, "the audio after the pre-fill is the input, bit for bit")
        let stats = control.statistics.snapshot()
        #expect(stats.periods == 40)
        #expect(stats.captureXruns == 0 && stats.playbackXruns == 0)
    }

    @Test func aDACWithoutCaptureRunsPlaybackAlone() throws {
        // capture = "none": playback is opened alone and paces the loop; the codec inputs are
        // silence, and the tone mixed into the outputs is what the DAC plays.
        let rig = try ALSATestRig(inputBytes: [])
        defer { rig.remove() }
        let period = 64, frames = 64 * 40
        let engine = try Engine.passthrough(period: period)
        try engine.connect(from: "tone", to: "codec.out")
        let control = DriverControl(frameLimit: frames)
        let p = ALSATestRig.parameters(format: .s16, capture: ALSAParameters.noCapture)
        let driver = ALSADriver(parameters: p, engine: engine, control: control, pacing: .free, config: rig.config)
        try driver.open()
        #expect(driver.run() == nil)
        driver.close()
        let out = try rig.outputBytes()
        let prefill = period * p.periods * 4
        #expect(out.count == prefill + frames * 4)
        let samples = stride(from: prefill, to: out.count - 1, by: 2).map { Int16(bitPattern: UInt16(out[$0]) | UInt16(out[$0 + 1]) << 8) }
        let peak = samples.map { abs(Int($0)) }.max() ?? 0
        // -20 dBFS sine: a peak of about 3277 of 32767.
        #expect((3000...3400).contains(peak), "the tone reached the DAC (peak \(peak))")
        let stats = control.statistics.snapshot()
        #expect(stats.periods == 40)
        #expect(stats.captureXruns == 0 && stats.playbackXruns == 0)
    }

    @Test func automaticPacingDoesNotSpinOnAPluginThatDoesNotPace() throws {
        let rig = try ALSATestRig(inputBytes: [])
        defer { rig.remove() }
        let period = 256
        let frames = period * 20 // about 107 ms of audio
        let control = DriverControl(frameLimit: frames)
        let driver = ALSADriver(parameters: ALSATestRig.parameters(format: .s16, capture: "nullpcm",
                                                                   playback: "nullpcm"),
                                engine: try .passthrough(period: period), control: control, config: rig.config)
        try driver.open()
        let start = monotonicNanoseconds()
        #expect(driver.run() == nil)
        let elapsed = monotonicNanoseconds() - start
        #expect(driver.currentWaitMode == .timer, "null does not pace: the loop paces itself with a timer")
        // Paced at the audio rate: never much faster than real time.
        #expect(elapsed >= 95_000_000, "ran \(frames) frames in \(elapsed / 1_000_000) ms")
    }

    @Test func aMissingDeviceIsNamed() throws {
        let rig = try ALSATestRig(inputBytes: [])
        defer { rig.remove() }
        let driver = ALSADriver(parameters: ALSATestRig.parameters(format: .s16, capture: "nosuchpcm"),
                                engine: try .passthrough(period: 64), control: DriverControl(), config: rig.config)
        #expect {
            try driver.open()
        } throws: { error in
            guard case .alsa(let e)? = error as? DriverError, case .open(let device, let stream, _) = e else { return false }
            return device == "nosuchpcm" && stream == "capture" && e.isRetryable
                && e.description.contains("cannot open capture device 'nosuchpcm'")
        }
    }

    @Test func anUnsupportedParameterNamesWhatTheDeviceOffers() throws {
        // alsa-lib's `null` accepts everything, so restrict the format through a `linear` plugin
        // whose slave is S16 only: asking for FLOAT_LE there must fail and name the formats offered.
        let restricted = try ALSAConfigText("""
            pcm.lin { type linear slave { pcm { type null } format S16_LE } }
            """)
        let q = ALSAParameters(captureDevice: "lin", playbackDevice: "lin", format: .float, sampleRate: 48000,
                               inputs: 2, outputs: 2, periods: 2, realtimePriority: 0)
        let driver = ALSADriver(parameters: q, engine: try .passthrough(period: 64), control: DriverControl(),
                                config: restricted)
        #expect {
            try driver.open()
        } throws: { error in
            guard case .alsa(let e)? = error as? DriverError, case let .unsupported(device, _, parameter, asked, offered) = e else {
                Issue.record("unexpected \(error)")
                return false
            }
            return device == "lin" && parameter == "format" && asked == "FLOAT_LE" && !offered.isEmpty
                && e.description.contains("cannot do format FLOAT_LE")
        }
    }

    @Test func anImpossiblePeriodIsRefusedWithTheRange() throws {
        let rig = try ALSATestRig(inputBytes: [])
        defer { rig.remove() }
        var p = ALSATestRig.parameters(format: .s16, capture: "nullpcm", playback: "nullpcm")
        p.inputs = 0 // no PCM has zero channels
        let driver = ALSADriver(parameters: p, engine: try .passthrough(period: 64), control: DriverControl(),
                                config: rig.config)
        #expect {
            try driver.open()
        } throws: { error in
            guard case .alsa(let e)? = error as? DriverError, case let .unsupported(_, stream, parameter, asked, offered) = e else {
                return false
            }
            return stream == "capture" && parameter == "channels" && asked == "0" && offered.contains("to")
        }
    }
}
