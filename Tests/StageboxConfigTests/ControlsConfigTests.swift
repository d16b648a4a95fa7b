import Testing
@testable import StageboxConfig

/// `[[button]]` and `[[led]]`: values, defaults, trigger names, and lines used twice.
@Suite struct ControlsConfigTests {
    private func problems(_ text: String) -> [String] {
        ConfigParser.parse(text, file: "box.toml").1.map(\.description)
    }

    @Test func aButtonAndAnLEDAreRead() {
        let (config, problems) = ConfigParser.parse("""
            [[button]]
            name = "rec"
            chip = "gpiochip0"
            line = 17
            active = "low"
            bias = "pull-up"
            debounce_ms = 20
            press = "record"
            release = ""
            long_press = "marker"
            long_press_ms = 800

            [[led]]
            chip = "gpiochip1"
            line = 27
            active = "high"
            trigger = "call.mic-mute"
            """, file: "box.toml")
        #expect(problems.isEmpty)
        var button = ButtonEntry(name: "rec", sourceLine: 1, number: 1)
        button.line = 17
        button.press = "record"
        button.longPress = "marker"
        button.longPressMs = 800
        #expect(config.buttons == [button])
        var led = LEDEntry(trigger: "call.mic-mute", sourceLine: 13, number: 1)
        led.chip = "gpiochip1"
        led.line = 27
        #expect(config.leds == [led])
    }

    /// Every built-in trigger may be an LED's, and a button's but `update`, which only shows
    /// an update: the takes' copy onto a stick too.
    @Test func everyBuiltinTriggerIsAcceptedForAnLEDAndAllButUpdateForAButton() {
        for name in ["record", "mute", "mute-out", "play", "marker", "copy-takes", "update"] {
            let led = "[[led]]\nline = 5\ntrigger = \"\(name)\"\n"
            #expect(problems(led).isEmpty, "\(name): \(problems(led))")
            let button = problems("[[button]]\nline = 4\nlong_press = \"\(name)\"\n")
            if name == "update" {
                #expect(button == ["box.toml:3: button[1].long_press: the trigger 'update' only shows a state on an LED; firing it does nothing"],
                        "\(button)")
            } else {
                #expect(button.isEmpty, "\(name): \(button)")
            }
        }
    }

    @Test func aButtonNeedsOnlyItsLine() {
        let (config, problems) = ConfigParser.parse("[[button]]\nline = 4\npress = \"mute\"\n", file: "box.toml")
        #expect(problems.isEmpty)
        let b = config.buttons.first
        #expect(b?.name == "button 1" && b?.chip == "gpiochip0" && b?.active == "low" && b?.bias == "pull-up")
        #expect(b?.debounceMs == 20 && b?.longPress == "" && b?.longPressMs == 600)
    }

    @Test func badValuesAreProblemsAtTheirLines() {
        let p = problems("""
            [[button]]
            line = 2000
            active = "sideways"
            bias = "pull-sideways"
            debounce_ms = 1001
            long_press_ms = "long"
            colour = "red"

            [[led]]
            chip = ""
            line = 3
            """)
        #expect(p == [
            "box.toml:2: button[1].line: 2000 is out of range (allowed: 0–1023)",
            "box.toml:3: button[1].active: 'sideways' is not a known value (allowed: low | high)",
            "box.toml:4: button[1].bias: 'pull-sideways' is not a known value (allowed: pull-up | pull-down | disable | as-is)",
            "box.toml:5: button[1].debounce_ms: 1001 is out of range (allowed: 0–1000)",
            "box.toml:6: button[1].long_press_ms: must be an integer, not string (allowed: 100–10000)",
            "box.toml:7: button[1].colour: unknown key (allowed: name, chip, line, active, bias, debounce_ms, press, release, long_press, long_press_ms)",
            "box.toml:9: led[1].trigger: missing",
            "box.toml:10: led[1].chip: must not be empty",
        ])
        #expect(ConfigParser.parse("[[button]]\nline = 2000\n", file: "f").0.buttons.isEmpty, "an entry with a problem is left out")
    }

    @Test func aMissingLineIsAProblem() {
        #expect(problems("[[button]]\npress = \"mute\"\n") == ["box.toml:1: button[1].line: missing"])
    }

    @Test func triggerNamesFollowTheTriggerRules() {
        let p = problems("""
            [[button]]
            line = 1
            press = "recrod"
            long_press = "bad client.x"

            [[led]]
            line = 2
            trigger = "call.mute"
            """)
        #expect(p.count == 2)
        #expect(p.first?.hasPrefix("box.toml:3: button[1].press: no built-in trigger named 'recrod'") == true)
        #expect(p.last?.hasPrefix("box.toml:4: button[1].long_press: invalid client name 'bad client'") == true)
    }

    @Test func aLineUsedTwiceIsAProblemAtTheLaterEntry() {
        let (config, problems) = ConfigParser.parse("""
            [[button]]
            name = "rec"
            line = 17
            press = "record"

            [[button]]
            name = "mute"
            chip = "/dev/gpiochip0"
            line = 17
            press = "mute"

            [[led]]
            chip = "0"
            line = 17
            trigger = "mute"

            [[led]]
            line = 27
            trigger = "mute"

            [[led]]
            line = 27
            trigger = "record"

            [[led]]
            chip = "gpiochip1"
            line = 17
            trigger = "record"
            """, file: "box.toml")
        let owner = "(allowed: one button or LED per line)"
        #expect(problems.map(\.description) == [
            "box.toml:9: button[2].line: /dev/gpiochip0 line 17 is already used by button[1] 'rec' (line 1) \(owner)",
            "box.toml:14: led[1].line: 0 line 17 is already used by button[1] 'rec' (line 1) \(owner)",
            "box.toml:22: led[3].line: gpiochip0 line 27 is already used by led[2] (line 17) \(owner)",
        ])
        #expect(config.buttons.map(\.name) == ["rec"])
        #expect(config.leds.map(\.number) == [2, 4], "the later of each pair is left out; another chip is another line")
    }

    @Test func notAnArrayOfTables() {
        #expect(problems("button = 3\n") == ["box.toml:1: button: must be an array of tables, written [[button]]"])
    }
}

extension ControlsConfigTests {
    @Test func aSharedLineIsFoundEvenWhenTheFirstEntryHasAnotherProblem() {
        #expect(problems("""
            [[button]]
            line = 17
            press = "recrod"

            [[led]]
            line = 17
            trigger = "mute"
            """).map { String($0.prefix(40)) } == [
            "box.toml:3: button[1].press: no built-in",
            "box.toml:6: led[1].line: gpiochip0 line ",
        ])
        #expect(problems("[[button]]\nline = 5000\n[[led]]\nline = 0\ntrigger = \"mute\"\n")
            == ["box.toml:2: button[1].line: 5000 is out of range (allowed: 0–1023)"],
            "a line that is itself wrong clashes with nothing")
    }
}
