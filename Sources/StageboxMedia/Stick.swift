/// A USB stick's filesystem as Stagebox mounted it.
public struct Stick: Sendable, Equatable {
    /// Its device under /dev ("sda1").
    public var device: String
    /// Where it is mounted: the media root's folder named for its label, or its device.
    public var mountPoint: String
    public var filesystem: StickFilesystem
    /// Mounted read-only: its check found damage it could not mend.
    public var readOnly: Bool
    /// What its check said, when there was something to say.
    public var note: String?

    /// The name the console uses for it: its folder's.
    public var name: String { String(mountPoint.split(separator: "/").last ?? Substring(device)) }
}

/// A folder name for a stick: its label with what a path or a shell would trip on replaced,
/// else the device's name.
func folderName(label: String?, device: String) -> String {
    guard let label else { return device }
    let kept = label.unicodeScalars.map { c -> Character in
        switch c {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": Character(c)
        default: "_"
        }
    }
    let name = String(kept).trimmingPrefix { $0 == "." }
    return name.isEmpty || name.allSatisfy({ $0 == "_" }) ? device : String(name)
}
