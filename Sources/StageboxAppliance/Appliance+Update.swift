import Logging
import StageboxTriggers
import StageboxUpdate

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Appliance {
    /// Updates through RAUC, with the `update` trigger showing them on an LED: alternate while
    /// one waits or installs, selected once it is in (the reboot follows), error when it failed.
    /// Tests point the updater elsewhere with STAGEBOX_RAUC (a stand-in for /usr/bin/rauc),
    /// STAGEBOX_RELEASE_FILE, STAGEBOX_MARK_GOOD_AFTER (seconds) and STAGEBOX_REBOOT (a
    /// command; empty: none).
    static func makeUpdater(triggers: TriggerBoard, recording: Recording, logger: Logger) -> Updater {
        var settings = Updater.Settings()
        if let path = environment("STAGEBOX_RAUC") { settings.rauc = Rauc(path: path) }
        if let path = environment("STAGEBOX_RELEASE_FILE") { settings.releaseFile = path }
        if let seconds = environment("STAGEBOX_MARK_GOOD_AFTER").flatMap(Double.init) { settings.markGoodAfterSeconds = seconds }
        if let command = environment("STAGEBOX_REBOOT") {
            let words = command.split(separator: " ").map(String.init)
            settings.rebootCommand = words.isEmpty ? nil : words
        }
        triggers.addKeepingState(name: "update", title: "An update: installing (alternate), in (selected), failed (error)") {}
        return Updater(settings: settings, logger: logger, takesRunning: { recording.runningTakes }) { phase in
            let state: TriggerState
            switch phase {
            case .idle: state = .normal
            case .waitingForTake, .installing: state = .alternate
            case .installed: state = .selected
            case .failed: state = .error
            }
            triggers.setState("update", state)
        }
    }

    private static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
