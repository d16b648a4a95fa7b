import CLinux
import StageboxSystem
import SystemPackage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps the wall clock from going backwards across power cuts on a board with no battery:
/// at start, a clock behind the saved time (or behind the newest file in the folders named,
/// the takes) is set forward to it; while running, and at a clean stop, the time is saved.
/// With `[clock] rtc`, the time comes from a battery-backed RTC first. Whether the time can be
/// trusted (NTP set it, or an RTC did) is told to the recorder, which marks takes made without it.
public final class ClockKeeper: Sendable {
    public struct Settings: Sendable {
        /// The file the time is kept in; "" keeps none (and only trusts what the kernel says).
        public var file: String
        /// Folders whose newest file the clock must not be behind at start (the takes).
        public var folders: [String]
        public var saveIntervalNanos: Int64 = 600_000_000_000
        /// Where the kernel's files are (`/sys`: an RTC's `hctosys`).
        public var sysfs = "/sys"
        /// A battery-backed RTC to take the time from at start (`[clock] rtc`), and to keep
        /// right while NTP disciplines the clock.
        public var rtc: RealTimeClock?

        public init(file: String, folders: [String]) {
            self.file = file
            self.folders = folders
        }
    }

    /// What happened at start, for the log and the console.
    public enum Start: Sendable, Equatable {
        case ahead(savedSeconds: Int64?)
        case setForward(from: Int64, to: Int64)
        case behindButNotSet(from: Int64, to: Int64, why: String)
    }

    public let settings: Settings
    public let start: Start
    /// What the RTC said at start, for the log: nil without one.
    public let rtcLine: String?
    /// The RTC's device once the chip is attached (/dev/rtcN), read well or not: NTP's time is
    /// written to it, which also mends a chip that had lost its time.
    private let rtcDevice: String?
    /// Whether the clock agrees with a good reading of the RTC at start (set from it, or
    /// already within a minute of it), and nothing saved overrode it.
    public let rtcConfirmed: Bool
    private let loop: ServiceLoop?
    /// NTP has disciplined the clock since start: the time stays good after NTP stops (the
    /// network gone), as the kernel's free-running clock drifts seconds a day, not minutes.
    private let ntpSeen = Atomic(false)
    private let onProblem: @Sendable (String) -> Void

    /// Checks the clock against what was saved and sets it forward where it is behind (which
    /// needs CAP_SYS_TIME: the appliance runs as root).
    public init(_ settings: Settings, setClock: (Int64) -> Errno? = ClockKeeper.setSystemClock,
                onProblem: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.onProblem = onProblem
        let rtc = Self.readRTC(settings.rtc, setClock: setClock)
        (rtcDevice, rtcLine) = (rtc.device, rtc.line)
        let now = Self.nowSeconds()
        let saved = settings.file.isEmpty ? nil : SavedTime.read(settings.file)
        let newest = SavedTime.newestModification(in: settings.folders)
        let floor = [saved, newest].compactMap { $0 }.max()
        if let floor, floor > now {
            // One second on: the next thing made is later than everything already there.
            if let error = setClock(floor + 1) {
                start = .behindButNotSet(from: now, to: floor + 1, why: "\(error)")
            } else {
                start = .setForward(from: now, to: floor + 1)
            }
        } else {
            start = .ahead(savedSeconds: saved)
        }
        // A saved time or take later than the RTC's means the RTC is behind: not trusted.
        if case .setForward = start { rtcConfirmed = false } else { rtcConfirmed = rtc.confirmed }
        loop = settings.file.isEmpty && rtcDevice == nil ? nil : try? ServiceLoop(named: "clock")
    }

    /// The RTC at start, when one is configured: attached, read, and the clock set from it
    /// when the clock is behind it and NTP does not discipline the clock (a restart of stagebox
    /// must not step a good clock back to the RTC's whole seconds). A reading before 2020 or
    /// from 2100 on is a chip that lost its time (some count from 2000 with a flat battery).
    private static func readRTC(_ rtc: RealTimeClock?, setClock: (Int64) -> Errno?)
        -> (device: String?, line: String?, confirmed: Bool) {
        guard let rtc else { return (nil, nil, false) }
        let device: String
        do throws(RealTimeClock.Failure) {
            device = try rtc.attach()
        } catch {
            return (nil, "clock: \(error)", false)
        }
        do throws(RealTimeClock.Failure) {
            let seconds = try rtc.read(device)
            guard plausibleRTC.contains(seconds) else {
                return (device, "clock: the RTC (\(device)) says \(SavedTime.utc(seconds)), which cannot be right (its battery?): not used", false)
            }
            let now = nowSeconds()
            if kernelSaysSynchronized() || seconds <= now {
                let agrees = abs(now - seconds) <= 60 // an RTC drifts seconds a month, not a minute
                return (device, "clock: the RTC (\(device)) says \(SavedTime.utc(seconds)); the clock, \(SavedTime.utc(now)), is left as it is", agrees)
            }
            if let error = setClock(seconds) {
                return (device, "clock: the RTC (\(device)) says \(SavedTime.utc(seconds)), but the clock cannot be set: \(error)", false)
            }
            return (device, "clock: set from the RTC (\(device)): \(SavedTime.utc(seconds))", true)
        } catch {
            return (device, "clock: \(error)", false)
        }
    }

    /// 2020-01-01 up to 2100-01-01: no RTC on a board running this was set before 2020, and
    /// the DS1307 family counts to 2099.
    static let plausibleRTC: Range<Int64> = 1_577_836_800..<4_102_444_800

    /// Starts saving the time every `saveIntervalNanos` (at once first).
    public func startSaving() throws(SystemCallError) {
        guard let loop else { return }
        try loop.start({ [self] _ in
            save()
            return .init(deadline: monotonicNanoseconds() + settings.saveIntervalNanos)
        }, finish: { [self] in save() })
    }

    /// Saves the time now (also the loop's last act at a clean stop), and sets the RTC from
    /// the clock while NTP disciplines it (the RTC drifts; NTP does not).
    public func save() {
        if let rtc = settings.rtc, let rtcDevice, Self.kernelSaysSynchronized() {
            do throws(RealTimeClock.Failure) {
                try rtc.set(rtcDevice, to: Self.nowSeconds())
            } catch {
                onProblem("clock: \(error)")
            }
        }
        guard !settings.file.isEmpty else { return }
        do throws(SystemCallError) {
            try SavedTime.write(Self.nowSeconds(), to: settings.file)
        } catch {
            onProblem("clock: the time cannot be saved: \(error)")
        }
    }

    /// Asks the clock's thread to save the time now (a take started); never blocks.
    public func saveSoon() { loop?.wake() }

    public func stop() { loop?.stop() }

    /// Whether the wall clock can be trusted: NTP has set it (the kernel's clock is in sync),
    /// or an RTC set it at boot (the kernel's, or `[clock] rtc` read at start).
    public var isTrusted: Bool {
        _ = readNTPState() // latches a synchronised clock, as the health thread's reads do
        return ntpSeen.load(ordering: .relaxed) || rtcConfirmed || rtcSetTheClock
    }

    private var rtcSetTheClock: Bool {
        Folder.names(in: settings.sysfs + "/class/rtc").contains { rtc in
            (try? WholeFile.read(settings.sysfs + "/class/rtc/\(rtc)/hctosys", limit: 16))?.hasPrefix("1") == true
        }
    }

    /// The line for the log at start, and for `status`.
    public var startLine: String {
        switch start {
        case .ahead(let saved):
            return "clock: \(SavedTime.utc(Self.nowSeconds()))" + (saved.map { ", not behind the time saved (\(SavedTime.utc($0)))" } ?? "")
        case .setForward(let from, let to):
            return "clock: was behind the last known time (\(SavedTime.utc(from)) < \(SavedTime.utc(to))): set forward to it"
        case .behindButNotSet(let from, let to, let why):
            return "clock: behind the last known time (\(SavedTime.utc(from)) < \(SavedTime.utc(to))) and cannot be set (\(why)): take names may sort before older ones"
        }
    }

    public static func nowSeconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }

    /// Sets CLOCK_REALTIME; the error, or nil.
    public static func setSystemClock(_ seconds: Int64) -> Errno? {
        var ts = timespec(tv_sec: time_t(seconds), tv_nsec: 0)
        return clock_settime(CLOCK_REALTIME, &ts) == 0 ? nil : Errno(rawValue: errno)
    }

    /// The kernel's NTP state: an unsynchronised clock is STA_UNSYNC (the state after boot
    /// until ntpd or an RTC sync disciplines it).
    static func kernelSaysSynchronized() -> Bool { stagebox_clock_synchronized() == 1 }

    /// The same for the health thread: nil when the kernel cannot be asked.
    public static func ntpSynchronized() -> Bool? {
        let state = stagebox_clock_synchronized()
        return state < 0 ? nil : state == 1
    }

    /// The kernel's NTP state, read by the health thread every second; a synchronised clock is
    /// remembered for the run (`isTrusted`), whether or not a take asked just then.
    public func readNTPState() -> Bool? {
        let state = Self.ntpSynchronized()
        if state == true { ntpSeen.store(true, ordering: .relaxed) }
        return state
    }
}
