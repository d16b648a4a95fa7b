import Logging
import StageboxSystem
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

    /// An update bundle (NAME.raucb in a stick's top folder) is installed when the stick is
    /// plugged, as one copied onto BOOT is at power-on: renamed NAME.raucb.taken first, so it
    /// is tried once and never in a loop; the same `update` as the console's (it waits for a
    /// take to end). One bundle a stick: with several, the newest by name.
    static func installBundlesFromSticks(recording: Recording, updater: Updater, logger: Logger) {
        recording.stickListeners.withLock { $0.append { stick in
            let bundles = Folder.names(in: stick.mountPoint).filter { $0.hasSuffix(".raucb") && !$0.hasPrefix(".") }
            guard let name = bundles.last else { return }
            if bundles.count > 1 { logger.warning("update: \(bundles.count) bundles on \(stick.name): installing \(name), the last by name") }
            let path = stick.mountPoint + "/" + name
            guard !stick.readOnly, rename(path, path + ".taken") == 0 else {
                logger.error("update: cannot rename \(path) (a read-only or damaged stick?): not installed, so that it cannot loop")
                return
            }
            sync()
            logger.info("update: installing \(path) from the stick (renamed \(name).taken)")
            logger.info("update: \(updater.install(path + ".taken", force: false))")
        } }
    }

    private static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
