import Logging
import StageboxConfig
import StageboxControls
import StageboxFormatting
import Synchronization
import StageboxTriggers

/// The buttons and LEDs of `stagebox run`: `[[button]]` fires triggers, `[[led]]` shows them.
/// A line that cannot be had is logged by chip and line, and the rest runs.
final class RunningControls: Sendable {
    let buttons: ButtonWatcher?
    let leds: LEDDriver?

    private init(buttons: ButtonWatcher?, leds: LEDDriver?) {
        self.buttons = buttons
        self.leds = leds
    }

    /// Starts the button thread and the LED thread (each only when configured).
    static func start(_ config: StageboxConfiguration, triggers: TriggerBoard, logger: Logger) -> RunningControls {
        RunningControls(buttons: startButtons(config.buttons, triggers: triggers, logger: logger),
                        leds: startLEDs(config.leds, triggers: triggers, logger: logger))
    }

    /// Stops both threads; the LEDs go off and every line is released.
    func stop() {
        buttons?.stop()
        leds?.stop()
    }

    static func settings(_ entry: ButtonEntry) -> ButtonSettings {
        func trigger(_ name: String) -> String? { name.isEmpty ? nil : name }
        return ButtonSettings(name: entry.name, chip: entry.chip, line: entry.line, activeLow: entry.active == "low",
                              bias: GPIOBias(rawValue: entry.bias) ?? .pullUp,
                              debounceNanos: Int64(entry.debounceMs) * 1_000_000,
                              press: trigger(entry.press), release: trigger(entry.release),
                              longPress: trigger(entry.longPress), longPressNanos: Int64(entry.longPressMs) * 1_000_000)
    }

    static func settings(_ entry: LEDEntry) -> LEDSettings {
        LEDSettings(chip: entry.chip, line: entry.line, activeLow: entry.active == "low", trigger: entry.trigger)
    }

    private static func startButtons(_ entries: [ButtonEntry], triggers: TriggerBoard, logger: Logger) -> ButtonWatcher? {
        guard !entries.isEmpty else { return nil }
        // Client triggers that did not exist when a button fired them, each logged once.
        let missing = Mutex<Set<String>>([])
        do {
            let watcher = try ButtonWatcher(buttons: entries.map(settings), onEvent: { button, event in
                guard let name = button.trigger(for: event) else { return }
                let what = "button \(button.name): \(eventName(event)) → \(name)"
                if let state = triggers.fire(name) {
                    logger.info("\(what) (\(state.name))")
                } else if missing.withLock({ $0.insert(name).inserted }) {
                    logger.info("\(what): no such trigger yet (a client makes it when it connects); nothing fired")
                }
            }, onProblem: { error in
                logger.error("button: \(error); that button is no longer watched")
            })
            for error in try watcher.start() { logger.error("button: \(error); running without that button") }
            for status in watcher.statuses where status.problem == nil {
                let b = status.settings
                logger.info("button \(b.name) on \(b.chip) line \(b.line): \(status.pressed == true ? "pressed" : "released")")
            }
            return watcher
        } catch {
            logger.error("buttons: \(error); running without buttons")
            return nil
        }
    }

    private static func startLEDs(_ entries: [LEDEntry], triggers: TriggerBoard, logger: Logger) -> LEDDriver? {
        guard !entries.isEmpty else { return nil }
        let (opened, errors) = LEDDriver.open(entries.map(settings))
        for error in errors { logger.error("led: \(error); running without that LED") }
        guard !opened.isEmpty else { return nil }
        do {
            let driver = try LEDDriver(leds: opened, state: { triggers.state($0) }, onShown: { shown in
                let s = shown.settings
                let look = LEDPattern.blinkPeriod(shown.state) != nil ? "blinking" : shown.lit ? "on" : "off"
                let latency = fixed(Double(shown.latencyNanos) / 1e6, digits: 2)
                logger.info("led \(s.chip) line \(s.line): \(s.trigger) \(shown.state.name), \(look), \(latency) ms after the change")
            }, onProblem: { error in
                logger.error("led: \(error); that LED is left as it is")
            })
            triggers.onChange { name, _ in driver.changed(trigger: name) }
            triggers.onRemove { driver.changed(trigger: $0) } // a client trigger gone: its LED goes off
            try driver.start()
            return driver
        } catch {
            for led in opened { led.output.release() }
            logger.error("leds: \(error); running without LEDs")
            return nil
        }
    }

    private static func eventName(_ event: ButtonEvent) -> String {
        switch event {
        case .press: "press"
        case .release: "release"
        case .longPress: "long press"
        }
    }
}
