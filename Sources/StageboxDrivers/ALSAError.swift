import CALSA

/// Why the ALSA driver could not open, configure or keep running a device.
public enum ALSAError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device cannot be opened (missing, busy, no permission).
    case open(device: String, stream: String, code: Int32)
    /// The device cannot do what the configuration asks: names the parameter,
    /// what was asked, and what the device offers.
    case unsupported(device: String, stream: String, parameter: String, asked: String, offered: String)
    /// Another ALSA call failed.
    case call(device: String, what: String, code: Int32)
    /// The device went away while running (unplugged, driver unloaded).
    case disappeared(device: String, code: Int32)
    /// Waiting for the device's period interrupt failed (`poll`, other than EINTR).
    case pollFailed(device: String, code: Int32)

    public var description: String {
        switch self {
        case let .open(device, stream, code):
            return "cannot open \(stream) device '\(device)': \(Self.text(code))"
        case let .unsupported(device, stream, parameter, asked, offered):
            return "\(stream) device '\(device)' cannot do \(parameter) \(asked) (the device offers \(offered))"
        case let .call(device, what, code):
            return "\(device): \(what) failed: \(Self.text(code))"
        case let .disappeared(device, code):
            return "device '\(device)' disappeared: \(Self.text(code))"
        case let .pollFailed(device, code):
            return "\(device): waiting for the period interrupt (poll) failed: \(Self.text(code))"
        }
    }

    /// alsa-lib's text for an error code.
    public static func text(_ code: Int32) -> String {
        String(cString: snd_strerror(code)) + " (\(code))"
    }

    /// Whether the error means the device is gone, busy or failing, and opening it again
    /// later may work.
    public var isRetryable: Bool {
        switch self {
        case .disappeared, .open, .pollFailed: return true
        default: return false
        }
    }
}
