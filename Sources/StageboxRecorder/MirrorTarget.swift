import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where takes are copied (`[recorder] mirror`): "" nowhere; "usb" the first writable medium
/// mounted under the media root (`/media`), in its folder `takes`; any other value a directory
/// that must exist on a medium of its own: not the root filesystem's (a stick's mount point
/// with no stick in it) and not the takes' own.
public enum MirrorTarget {
    /// The directory for this take's copy, or why there is none; nil with no mirror configured.
    /// With `create` false, the folder a stick would get is named but not made.
    public static func resolve(_ setting: String, mediaRoot: String = "/media", mainDirectory: String,
                               create: Bool = true) -> Result<String, MirrorRefusal>? {
        switch setting {
        case "": return nil
        case "usb":
            guard let mount = firstWritableMount(under: mediaRoot) else {
                return .failure(MirrorRefusal(reason: "no writable USB stick is mounted under \(mediaRoot)"))
            }
            let directory = mount + "/takes"
            if create && mkdir(directory, 0o755) != 0 && errno != EEXIST {
                return .failure(MirrorRefusal(reason: "\(directory): \(String(cString: strerror(errno)))"))
            }
            return .success(create ? directory : mount)
        default:
            var st = stat()
            guard stat(setting, &st) == 0 else { return .failure(MirrorRefusal(reason: "\(setting): \(String(cString: strerror(errno)))")) }
            guard st.st_mode & S_IFMT == S_IFDIR else { return .failure(MirrorRefusal(reason: "\(setting) is not a directory")) }
            guard access(setting, W_OK) == 0 else { return .failure(MirrorRefusal(reason: "\(setting): \(String(cString: strerror(errno)))")) }
            if let device = device(of: "/"), device == st.st_dev {
                return .failure(MirrorRefusal(reason: "\(setting) is on the root filesystem: its medium is not mounted"))
            }
            if let device = device(of: mainDirectory), device == st.st_dev {
                return .failure(MirrorRefusal(reason: "\(setting) is on the same medium as \(mainDirectory): a copy needs another"))
            }
            return .success(setting)
        }
    }

    private static func device(of path: String) -> dev_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_dev : nil
    }

    /// The first directory under `root`, by name, that is a mount point (another device) and
    /// can be written (not read-only, not refused to us).
    static func firstWritableMount(under root: String) -> String? {
        guard let rootDevice = device(of: root) else { return nil }
        for name in Folder.names(in: root) where !name.hasPrefix(".") { // a stick being checked is mounted at .NAME
            var st = stat()
            var vfs = statvfs()
            let path = root + "/" + name
            guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_dev != rootDevice,
                  statvfs(path, &vfs) == 0, vfs.f_flag & UInt(ST_RDONLY) == 0, access(path, W_OK) == 0 else { continue }
            return path
        }
        return nil
    }
}

/// Why a take has no mirror copy.
public struct MirrorRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
