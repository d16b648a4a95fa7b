import Foundation
import Testing
@testable import StageboxConfig

@Suite struct ConfigParserTests {
    private func problems(_ text: String) -> [String] {
        ConfigParser.parse(text, file: "box.toml").1.map(\.description)
    }

    @Test func theDocumentedExampleParses() throws {
        let (config, problems) = ConfigParser.parse("""
            [audio]
            capture = "hw:CARD=sndrpihifiberry,DEV=0"   # ALSA PCM name of the codec's input
            playback = "hw:CARD=sndrpihifiberry,DEV=0"
            rate = 44100
            format = "S24_3LE"
            inputs = 1
            outputs = 2
            period = 128
            periods = 3
            rt_priority = 80

            [tone]
            signal = "noise"
            frequency = 440
            level_db = -6.5

            [[connect]]
            from = "codec.in"
            to = "codec.out"

            [[connect]]
            from = "tone"
            to = "codec.out"
            """, file: "box.toml")
        #expect(problems.isEmpty)
        #expect(config.audio.rate == 44100 && config.audio.format == "S24_3LE" && config.audio.inputs == 1)
        #expect(config.audio.period == 128 && config.audio.periods == 3 && config.audio.rtPriority == 80)
        #expect(config.tone.signal == "noise" && config.tone.frequency == 440 && config.tone.levelDB == -6.5)
        #expect(config.connections.map { "\($0.from)>\($0.to)@\($0.line)" } == ["codec.in>codec.out@17", "tone>codec.out@21"])
    }

    @Test func anEmptyFileIsTheDefaults() {
        let (config, problems) = ConfigParser.parse("", file: "x")
        #expect(problems.isEmpty)
        #expect(config == .defaults)
    }

    @Test func syntaxErrorsGiveTheirLine() {
        let p = problems("[audio]\nrate = 48000\nperiod = = 4\n")
        #expect(p.count == 1)
        #expect(p[0].hasPrefix("box.toml:3: (syntax): "))
    }

    @Test func unknownSectionsAndKeysAreErrors() {
        let p = problems("""
            [audio]
            rate = 48000
            sample_rate = 48000

            [mixer]
            gain = 1
            """)
        #expect(p == [
            "box.toml:3: audio.sample_rate: unknown key (allowed: capture, playback, rate, format, inputs, outputs, period, periods, rt_priority)",
            "box.toml:5: mixer: unknown section or key (allowed: [audio], [tone], [bus], [console], [watchdog], [health], [clock], [lifecycle], [recorder], [[connect]], [[button]], [[led]], [midi], [[midi.map]], [state])",
        ])
    }

    @Test func theWatchdogSectionIsReadAndChecked() {
        let (config, none) = ConfigParser.parse("[watchdog]\ndevice = \"/dev/watchdog\"\ntimeout = 10\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.watchdog == { var w = WatchdogSection(); w.device = "/dev/watchdog"; w.timeout = 10; return w }())
        #expect(StageboxConfiguration.defaults.watchdog.device == "none")
        #expect(problems("[watchdog]\ntimeout = 1\nbite = true\n") == [
            "box.toml:2: watchdog.timeout: 1 is out of range (allowed: 2–600)",
            "box.toml:3: watchdog.bite: unknown key (allowed: device, timeout)",
        ], "in line order")
    }

    @Test func theHealthSectionIsReadAndChecked() {
        let (config, none) = ConfigParser.parse("[health]\nwarn_temp_c = 70\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.health.warnTemperature == 70)
        #expect(StageboxConfiguration.defaults.health.warnTemperature == 80)
        #expect(problems("[health]\nwarn_temp_c = 200\nwarn_volts = 5\n") == [
            "box.toml:2: health.warn_temp_c: 200 is out of range (allowed: 40–110)",
            "box.toml:3: health.warn_volts: unknown key (allowed: warn_temp_c)",
        ])
        #expect(problems("[health]\nwarn_temp_c = \"hot\"\n") == ["box.toml:2: health.warn_temp_c: must be a number, not string (allowed: 40–110)"])
    }

    @Test func theClockSectionIsReadAndChecked() {
        let (config, none) = ConfigParser.parse("[clock]\nfile = \"/data/stagebox-clock\"\nsave_interval_s = 60\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.clock.file == "/data/stagebox-clock" && config.clock.saveInterval == 60)
        #expect(StageboxConfiguration.defaults.clock.file == "")
        #expect(problems("[clock]\nfile = \"clock.txt\"\nsave_interval_s = 5\n") == [
            "box.toml:2: clock.file: 'clock.txt' is not an absolute path (allowed: a path from /, like /data/stagebox-clock, or \"\")",
            "box.toml:3: clock.save_interval_s: 5 is out of range (allowed: 10–86400)",
        ])
    }

    @Test func theRTCIsReadAndChecked() {
        let (config, none) = ConfigParser.parse("[clock]\nrtc = \"ds3231\"\nrtc_i2c_bus = 0\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.clock.rtc == "ds3231" && config.clock.rtcBus == 0)
        #expect(StageboxConfiguration.defaults.clock.rtc == "" && StageboxConfiguration.defaults.clock.rtcBus == 1)
        #expect(problems("[clock]\nrtc = \"pcf8563\"\nrtc_i2c_bus = 40\n") == [
            "box.toml:2: clock.rtc: 'pcf8563' is not a chip the kernel's rtc-ds1307 drives (allowed: ds1307, ds1337, ds1338, ds1339, ds1340, ds3231, mcp7940x, or \"\" for none)",
            "box.toml:3: clock.rtc_i2c_bus: 40 is out of range (allowed: 0–31)",
        ])
    }

    @Test func theLifecycleSectionIsReadAndChecked() {
        let (config, none) = ConfigParser.parse("[lifecycle]\nsuspend_after = 300\nfade_ms = 15.5\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.lifecycle.suspendAfter == 300 && config.lifecycle.fadeMs == 15.5)
        #expect(StageboxConfiguration.defaults.lifecycle.suspendAfter == 0, "never, unless a board config says")
        #expect(StageboxConfiguration.defaults.lifecycle.fadeMs == 20)
        #expect(problems("[lifecycle]\nsuspend_after = -1\nfade_ms = 5000\nsleep = 1\n") == [
            "box.toml:2: lifecycle.suspend_after: -1 is out of range (allowed: 0–86400)",
            "box.toml:3: lifecycle.fade_ms: 5000 is out of range (allowed: 0–1000)",
            "box.toml:4: lifecycle.sleep: unknown key (allowed: suspend_after, fade_ms)",
        ])
        #expect(problems("[lifecycle]\nsuspend_after = \"soon\"\n") == [
            "box.toml:2: lifecycle.suspend_after: must be a number, not string (allowed: 0–86400)",
        ])
    }

    @Test func valuesAreRangeChecked() {
        let p = problems("""
            [audio]
            rate = 4000
            period = 8192
            periods = 1
            inputs = 0
            outputs = 33
            rt_priority = 100
            """)
        #expect(p == [
            "box.toml:2: audio.rate: 4000 is out of range (allowed: 8000–192000)",
            "box.toml:3: audio.period: 8192 is out of range (allowed: 16–4096)",
            "box.toml:4: audio.periods: 1 is out of range (allowed: 2–16)",
            "box.toml:5: audio.inputs: 0 is out of range (allowed: 1–32)",
            "box.toml:6: audio.outputs: 33 is out of range (allowed: 1–32)",
            "box.toml:7: audio.rt_priority: 100 is out of range (allowed: 0–99)",
        ])
    }

    @Test func typesAreChecked() {
        let p = problems("""
            [audio]
            rate = "48000"
            capture = 3
            format = "S8"

            [tone]
            frequency = "high"
            signal = "square"
            level_db = 6
            """)
        #expect(p.contains("box.toml:2: audio.rate: must be an integer, not string (allowed: 8000–192000)"))
        #expect(p.contains("box.toml:3: audio.capture: must be a string, not integer"))
        #expect(p.contains("box.toml:4: audio.format: 'S8' is not a known value (allowed: S16_LE | S24_LE | S24_3LE | S32_LE | FLOAT_LE)"))
        #expect(p.contains("box.toml:7: tone.frequency: must be a number, not string (allowed: 1–96000)"))
        #expect(p.contains("box.toml:8: tone.signal: 'square' is not a known value (allowed: sine | noise | silence)"))
        #expect(p.contains("box.toml:9: tone.level_db: 6 is out of range (allowed: -120–0)"))
        #expect(p.count == 6)
    }

    @Test func aToneAboveHalfTheRateIsRefused() {
        let p = problems("""
            [audio]
            rate = 16000

            [tone]
            frequency = 9000.0
            """)
        #expect(p == ["box.toml:5: tone.frequency: 9000.0 Hz is not below half the sample rate (16000 Hz): "
                      + "it would sound at another pitch (allowed: below 8000 Hz)"], "\(p)")
        #expect(problems("[audio]\nrate = 48000\n[tone]\nfrequency = 9000.0\n").isEmpty)
    }

    @Test func connectEntriesNeedFromAndTo() {
        let p = problems("""
            [[connect]]
            from = "codec.in"

            [[connect]]
            from = "tone"
            to = "codec.out"
            via = "fx"
            """)
        #expect(p == [
            "box.toml:1: connect[1].to: missing",
            "box.toml:7: connect[2].via: unknown key (allowed: from, to)",
        ])
    }

    @Test func aSectionThatIsNotATableIsAnError() {
        #expect(problems("audio = 3") == ["box.toml:1: audio: must be a table, like [audio]"])
        #expect(problems("connect = 3") == ["box.toml:1: connect: must be an array of tables, written [[connect]]"])
    }
}

@Suite struct ConfigLoaderTests {
    private func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func searchesInOrderAndFallsBackToDefaults() throws {
        let good = try temporaryFile("[audio]\nrate = 96000\n")
        defer { try? FileManager.default.removeItem(atPath: good) }
        let found = ConfigLoader.resolve(explicit: nil, searchPath: ["/nonexistent/stagebox.toml", good])
        #expect(found.source == .file(good) && found.config.audio.rate == 96000 && found.file == good)
        let none = ConfigLoader.resolve(explicit: nil, searchPath: ["/nonexistent/a.toml"])
        #expect(none.source == .builtinDefaults && none.problems.isEmpty && none.file == nil)
    }

    @Test func aBrokenFileGivesTheDefaultsAndEveryProblem() throws {
        let bad = try temporaryFile("[audio]\nrate = 1\nperiods = 99\n")
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let loaded = ConfigLoader.resolve(explicit: bad)
        #expect(loaded.source == .builtinDefaults)
        #expect(loaded.config == .defaults)
        #expect(loaded.problems.map(\.line) == [2, 3])
        #expect(loaded.file == bad, "the file read is still named: a support bundle goes beside it")
        #expect(ConfigLoader.resolve(explicit: "/nonexistent/stagebox.toml").file == nil, "no file: nothing to put a bundle beside")
    }

    @Test func unreadableFilesAreNamed() throws {
        #expect(throws: ConfigErrors.self) { try ConfigLoader.load(path: "/nonexistent/x.toml") }
        do { _ = try ConfigLoader.load(path: "/nonexistent/x.toml") } catch {
            #expect(error.description == "/nonexistent/x.toml: No such file or directory", "no line for the whole file")
        }
        let binary = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-\(UUID().uuidString).toml").path
        try Data([0x5B, 0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: binary))
        defer { try? FileManager.default.removeItem(atPath: binary) }
        do { _ = try ConfigLoader.load(path: binary) } catch {
            #expect(error.description == "\(binary): not UTF-8 text")
        }
    }

    /// A FIFO would hold the read until someone writes to it (stagebox could not even be
    /// stopped); a directory is no file either.
    @Test func onlyAFileIsReadAsAConfiguration() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("stagebox-\(UUID().uuidString).toml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: fifo) }
        do { _ = try ConfigLoader.load(path: fifo); Issue.record("a FIFO was read") } catch {
            #expect(error.description == "\(fifo): is a FIFO, not a configuration file")
        }
        do { _ = try ConfigLoader.load(path: "/tmp"); Issue.record("a directory was read") } catch {
            #expect(error.description == "/tmp: is a directory, not a configuration file")
        }
    }

    private func problems(_ text: String) -> [String] {
        ConfigParser.parse(text, file: "box.toml").1.map(\.description)
    }

    /// Edited on Windows: CRLF line ends and a byte-order mark; problems keep their lines.
    @Test func windowsLineEndsAndAByteOrderMarkKeepTheLines() {
        let text = "\u{FEFF}[audio]\r\nrate = 5\r\nperiod = 7\r\n\r\n[tone]\r\nsignal = \"sawtooth\"\r\n"
        let p = problems(text)
        #expect(p.count == 3, "\(p)")
        #expect(p.map { $0.prefix(11) } == ["box.toml:2:", "box.toml:3:", "box.toml:6:"], "\(p)")
    }

    @Test func theBusSocketIsAnAbsolutePathAUnixSocketCanHold() {
        #expect(problems("[bus]\nsocket = \"bus.sock\"\n")
            == ["box.toml:2: bus.socket: 'bus.sock' is not an absolute path (stagebox and its clients run from different folders) (allowed: a path from /, like /run/stagebox/bus.sock)"])
        let long = "/" + String(repeating: "s", count: 120)
        #expect(problems("[bus]\nsocket = \"\(long)\"\n") == ["box.toml:2: bus.socket: is 121 bytes long; a Unix socket's path holds at most 107"])
    }
}

/// `[state]`: where run-time changes are kept.
@Suite struct StateConfigTests {
    func parse(_ text: String) -> (StageboxConfiguration?, [String]) {
        let (config, problems) = ConfigParser.parse(text, file: "box.toml")
        return (config, problems.map(\.description))
    }

    @Test func aStateSectionIsRead() {
        let (config, problems) = parse("[state]\nfile = \"/data/stagebox-state.toml\"\nrestore = false\nwrite_delay_ms = 0\n")
        #expect(problems.isEmpty)
        #expect(config?.state?.file == "/data/stagebox-state.toml")
        #expect(config?.state?.restore == false)
        #expect(config?.state?.writeDelayMs == 0)
        #expect(parse("").0?.state == nil)
    }

    @Test(arguments: [
        ("[state]\nrestore = true\n", "box.toml:1: state.file: "),
        ("[state]\nfile = \"state.toml\"\n", "box.toml:2: state.file: 'state.toml' is not an absolute path to a file"),
        ("[state]\nfile = \"/data/\"\n", "is not an absolute path to a file"),
        ("[state]\nfile = \"/data/s.toml\"\nrestore = \"yes\"\n", "box.toml:3: state.restore: must be true or false"),
        ("[state]\nfile = \"/data/s.toml\"\nwrite_delay_ms = -1\n", "box.toml:3: state.write_delay_ms: -1 is out of range"),
        ("[state]\nfile = \"/data/s.toml\"\nkeep = 1\n", "box.toml:3: state.keep: unknown key"),
    ])
    func problemsAreNamed(text: String, expected: String) {
        let (_, problems) = parse(text)
        #expect(problems.contains { $0.hasPrefix(expected) || $0.contains(expected) }, "\(problems)")
    }
}
