import Logging
import StageboxConfig
import StageboxClock
import StageboxHealth

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Appliance {
    /// The health thread, reading `files` (the real `/sys` and `/proc`, or the trees
    /// `STAGEBOX_SYSFS_ROOT` and `STAGEBOX_PROCFS_ROOT` name); every change is logged as a
    /// warning. Without a thread (none to be had) stagebox runs without health.
    static func startHealth(_ section: HealthSection, files: SystemFiles?, clock: ClockKeeper?, logger: Logger) -> HealthMonitor? {
        let files = files ?? SystemFiles(sysfs: environment("STAGEBOX_SYSFS_ROOT") ?? "/sys",
                                         procfs: environment("STAGEBOX_PROCFS_ROOT") ?? "/proc")
        do {
            // The kernel's clock state is this machine's: left out when the files are a recorded
            // tree of another board's.
            let real = files == SystemFiles()
            let monitor = try HealthMonitor(files: files, warnTemperature: section.warnTemperature,
                                            clockSynchronized: { real ? (clock?.readNTPState() ?? ClockKeeper.ntpSynchronized()) : nil }) {
                logger.warning("\($0)")
            }
            try monitor.start()
            return monitor
        } catch {
            logger.error("\(error); running without the health thread")
            return nil
        }
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }
}

extension Appliance {
    /// The clock's keeper when `[clock] file` or `[clock] rtc` names one: the clock set from the
    /// RTC, then forward past the saved time and the newest take, then saved while running.
    /// Nil with neither.
    static func startClock(_ configuration: StageboxConfiguration, logger: Logger) -> ClockKeeper? {
        let clock = configuration.clock
        guard !clock.file.isEmpty || !clock.rtc.isEmpty else { return nil }
        var settings = ClockKeeper.Settings(file: clock.file, folders: [configuration.recorder.directory])
        settings.saveIntervalNanos = Int64(clock.saveInterval) * 1_000_000_000
        if let address = ClockSection.rtcAddresses.first(where: { $0.chip == clock.rtc })?.address {
            settings.rtc = RealTimeClock(chip: clock.rtc, bus: clock.rtcBus, address: address)
        }
        let keeper = ClockKeeper(settings) { logger.error("\($0)") }
        if let line = keeper.rtcLine {
            if keeper.rtcConfirmed { logger.info("\(line)") } else { logger.error("\(line)") }
        }
        switch keeper.start {
        case .ahead: logger.info("\(keeper.startLine)")
        case .setForward, .behindButNotSet: logger.warning("\(keeper.startLine)")
        }
        if !keeper.isTrusted { logger.warning("clock: not set by NTP or an RTC: takes say their time is not confirmed") }
        do {
            try keeper.startSaving()
        } catch {
            logger.error("clock: \(error); the time is not saved while running")
        }
        return keeper
    }
}
