import Logging
import StageboxConfig
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
    static func startHealth(_ section: HealthSection, files: SystemFiles?, logger: Logger) -> HealthMonitor? {
        let files = files ?? SystemFiles(sysfs: environment("STAGEBOX_SYSFS_ROOT") ?? "/sys",
                                         procfs: environment("STAGEBOX_PROCFS_ROOT") ?? "/proc")
        do {
            let monitor = try HealthMonitor(files: files, warnTemperature: section.warnTemperature) { logger.warning("\($0)") }
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
