/// One message of the kernel's device events (what udev and mdev read from the same socket):
/// an action on a device, with its properties ("SUBSYSTEM=block", "DEVNAME=sda1", …).
public struct Uevent: Sendable, Equatable {
    public var action: String
    public var properties: [String: String]

    public init(action: String, properties: [String: String]) {
        self.action = action
        self.properties = properties
    }

    /// Reads a kernel message: "ACTION@DEVPATH", then NUL-separated KEY=VALUE pairs. Nil for
    /// anything else (udev's own re-broadcasts start "libudev"; a truncated header).
    public init?(message bytes: some Collection<UInt8>) {
        let fields = bytes.split(separator: 0, omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
        guard let header = fields.first, header.contains("@"), !header.hasPrefix("libudev") else { return nil }
        var properties: [String: String] = [:]
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { continue }
            properties[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
        guard let action = properties["ACTION"] else { return nil }
        self.init(action: action, properties: properties)
    }

    public var subsystem: String? { properties["SUBSYSTEM"] }
    /// The device's node name under /dev ("sda1").
    public var deviceName: String? { properties["DEVNAME"].map { $0.hasPrefix("/dev/") ? String($0.dropFirst(5)) : $0 } }
    /// "disk" or "partition" for block devices.
    public var deviceType: String? { properties["DEVTYPE"] }
    public var devicePath: String? { properties["DEVPATH"] }
}
