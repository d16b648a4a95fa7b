import Synchronization

/// Where a driver is in its life, as `DriverSupervisor` moves it; the console shows it.
public enum DriverState: UInt8, AtomicRepresentable, Sendable, CustomStringConvertible {
    /// Opening the device.
    case starting
    /// The audio thread processes periods.
    case running
    /// The device could not be opened, or went away; the next try is at `DriverControl.retryAt`.
    case waitingForDevice
    /// Paused on request: the device is closed and no audio thread runs.
    case paused
    /// Not started, or ended.
    case stopped

    public var description: String {
        switch self {
        case .starting: return "starting"
        case .running: return "running"
        case .waitingForDevice: return "waiting for the device"
        case .paused: return "paused"
        case .stopped: return "stopped"
        }
    }
}
