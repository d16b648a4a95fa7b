import StageboxDrivers
import StageboxEngine
import StageboxTestSupport
import Testing

/// The engine's period is the one the codec runs at, or the codec is refused: never run at
/// another. A real ALSA device that cannot take the engine's period (the stagebox plugin,
/// which takes periods of 64 bytes and more) is refused by name, with what it offers.
@Suite struct PeriodAuthorityTests {
    @Test func aDeviceThatCannotTakeTheEnginesPeriodIsRefusedWithWhatItOffers() throws {
        let board = try SimulatedBoard()
        defer { _ = board.stop() }
        let config = try ALSAConfigText("""
            pcm_type.stagebox { lib "\(CExamples.buildDirectory.path)/libasound_module_pcm_stagebox.so" }
            pcm.tiny { type stagebox name "period-test" sink "none" source "none" socket "\(board.socket)" }
            """)
        // 8 frames of 16-bit stereo are 32 bytes a period: fewer than the plugin takes.
        let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: 8, inputs: 2, outputs: 2))
        let parameters = ALSAParameters(captureDevice: ALSAParameters.noCapture, playbackDevice: "tiny", format: .s16,
                                        sampleRate: 48000, inputs: 2, outputs: 2, periods: 2, realtimePriority: 0)
        let driver = ALSADriver(parameters: parameters, engine: engine, control: DriverControl(), config: config)
        #expect {
            try driver.open()
        } throws: { error in
            guard case .alsa(let e)? = error as? DriverError,
                  case let .unsupported(device, stream, parameter, asked, offered) = e else {
                Issue.record("unexpected: \(error)")
                return false
            }
            print("refused: \(e)")
            return device == "tiny" && stream == "playback" && parameter == "period" && asked == "8 frames"
                && offered.hasSuffix("frames") && !e.isRetryable
        }
        // The same device at a period it takes opens, and runs at exactly the engine's period.
        let engine64 = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2))
        let fine = ALSADriver(parameters: parameters, engine: engine64, control: DriverControl(), config: config)
        try fine.open()
        #expect(fine.period == 64)
        fine.close()
    }
}
