import Testing
@testable import StageboxConfig

@Suite struct RecorderConfigTests {
    private func problems(_ text: String) -> [String] {
        ConfigParser.parse(text, file: "box.toml").1.map(\.description)
    }

    @Test func theRecorderSectionIsReadAndChecked() {
        let (config, none) = ConfigParser.parse("""
            [recorder]
            directory = "/data/takes"
            sources = ["codec.in", "call.out"]
            encoding = "FLOAT"
            sync_interval_ms = 250
            pre_roll_s = 2.5
            min_free_mb = 128
            """, file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.recorder.directory == "/data/takes" && config.recorder.sources == ["codec.in", "call.out"])
        #expect(config.recorder.encoding == "FLOAT" && config.recorder.syncIntervalMs == 250)
        #expect(config.recorder.preRollSeconds == 2.5 && config.recorder.minFreeMB == 128)
        #expect(ConfigParser.parse("[recorder]\nsource = \"tone\"\n", file: "box.toml").0.recorder.sources == ["tone"])
        let defaults = StageboxConfiguration.defaults.recorder
        #expect(defaults.directory == "/data/recordings" && defaults.sources == ["codec.in"] && defaults.encoding == "PCM_24")
        #expect(defaults.syncIntervalMs == 1000 && defaults.preRollSeconds == 0 && defaults.minFreeMB == 64)
    }

    @Test func theSlatesStartIsRead() {
        let (config, none) = ConfigParser.parse("[recorder]\nproject = \"Night\"\nscene = \"1\"\ntape = \"D1\"\n", file: "box.toml")
        #expect(none.isEmpty)
        #expect(config.recorder.project == "Night" && config.recorder.scene == "1" && config.recorder.tape == "D1")
        #expect(problems("[recorder]\nscene = 12\n") == ["box.toml:2: recorder.scene: must be a string, not integer"])
    }

    @Test func badRecorderValuesNameTheirLine() {
        #expect(problems("""
            [recorder]
            directory = "recordings"
            encoding = "MP3"
            sync_interval_ms = 50
            pre_roll_s = 31
            min_free_mb = -1
            format = "wav"
            """) == [
            "box.toml:2: recorder.directory: 'recordings' is not an absolute path (allowed: a path from /, like /data/recordings)",
            "box.toml:3: recorder.encoding: 'MP3' is not a known value (allowed: PCM_16 | PCM_24 | PCM_32 | FLOAT)",
            "box.toml:4: recorder.sync_interval_ms: 50 is out of range (allowed: 100–10000)",
            "box.toml:5: recorder.pre_roll_s: 31 is out of range (allowed: 0–30)",
            "box.toml:6: recorder.min_free_mb: -1 is out of range (allowed: 0–1000000)",
            "box.toml:7: recorder.format: unknown key (allowed: directory, source, sources, encoding, sync_interval_ms, pre_roll_s, min_free_mb, mirror, mount_sticks, project, scene, tape)",
        ])
        #expect(problems("[recorder]\nsource = \"codec.in\"\nsources = [\"tone\"]\n") == [
            "box.toml:3: recorder.sources: give source or sources, not both",
        ])
        #expect(problems("[recorder]\nsources = [\"codec.in\", \"codec.in\"]\n") == [
            "box.toml:2: recorder.sources: a source is listed twice",
        ])
        #expect(problems("[recorder]\nsources = []\n") == [
            "box.toml:2: recorder.sources: must be a non-empty array of port names (allowed: sources = [\"codec.in\", \"call.out\"])",
        ])
        #expect(problems("[recorder]\nsource = \"bad name!\"\n").first?.hasPrefix("box.toml:2: recorder.source: invalid port name 'bad name!'") == true)
        #expect(problems("[recorder]\nsource = \"codec.out\"\n") == [
            "box.toml:2: recorder.source: codec.out is a receiver: a take records senders and filters (allowed: codec.in, tone or a client's CLIENT.PORT)",
        ])
        for name in ["codec.nosuch", "stagebox.record.codec.in", "nosuch"] {
            #expect(problems("[recorder]\nsources = [\"codec.in\", \"\(name)\"]\n") == [
                "box.toml:2: recorder.sources: no port named \(name) can be on the bus (allowed: codec.in, tone or a client's CLIENT.PORT)",
            ])
        }
        #expect(problems("[recorder]\nsources = [\"codec.in\", \"call.out\"]\n").isEmpty, "a client's port may come later")
    }

    @Test func theMirrorIsNoneAStickOrAnAbsolutePathElsewhere() {
        for good in ["", "usb", "/media/stick/takes"] {
            let (config, none) = ConfigParser.parse("[recorder]\nmirror = \"\(good)\"\n", file: "box.toml")
            #expect(none.isEmpty && config.recorder.mirror == good)
        }
        #expect(StageboxConfiguration.defaults.recorder.mirror == "")
        #expect(problems("[recorder]\nmirror = \"stick\"\n") == [
            "box.toml:2: recorder.mirror: 'stick' is neither \"usb\" nor an absolute path (allowed: \"\" (no copy), \"usb\" (the first USB stick) or a path from /)",
        ])
        #expect(problems("[recorder]\nmirror = \"/data/recordings\"\n") == [
            "box.toml:2: recorder.mirror: is the recorder's own directory: a copy must go to another medium",
        ])
        #expect(problems("[recorder]\nmirror = \"/data/recordings/\"\n").count == 1, "a trailing slash is the same directory")
        #expect(problems("[recorder]\nmirror = 3\n").count == 1)
    }
}
