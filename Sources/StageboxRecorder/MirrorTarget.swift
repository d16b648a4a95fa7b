#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where takes are copied (`[recorder] mirror`): "" nowhere; "usb" the first medium mounted
/// under the media root (`/media`), in its folder `takes`; any other value a directory that
/// must exist (it is on another medium: made here it would land on the root filesystem when
/// that medium is missing).
public enum MirrorTarget {
    /// The directory for this take's copy, or why there is none; nil with no mirror configured.
    public static func resolve(_ setting: String, mediaRoot: String = "/media") -> Result<String, MirrorRefusal>? {
        switch setting {
        case "": return nil
        case "usb":
            guard let mount = firstMount(under: mediaRoot) else {
                return .failure(MirrorRefusal(reason: "no USB stick is mounted under \(mediaRoot)"))
            }
            let directory = mount + "/takes"
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                return .failure(MirrorRefusal(reason: "\(directory): \(String(cString: strerror(errno)))"))
            }
            return .success(directory)
        default:
            var st = stat()
            guard stat(setting, &st) == 0 else {
                return .failure(MirrorRefusal(reason: "\(setting): \(String(cString: strerror(errno)))"))
            }
            guard st.st_mode & S_IFMT == S_IFDIR else { return .failure(MirrorRefusal(reason: "\(setting) is not a directory")) }
            guard access(setting, W_OK) == 0 else {
                return .failure(MirrorRefusal(reason: "\(setting): \(String(cString: strerror(errno)))"))
            }
            return .success(setting)
        }
    }

    /// The first directory under `root`, by name, that is a mount point (another device).
    static func firstMount(under root: String) -> String? {
        var rootStat = stat()
        guard stat(root, &rootStat) == 0, let dir = opendir(root) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        for name in names.sorted() {
            var st = stat()
            let path = root + "/" + name
            if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_dev != rootStat.st_dev { return path }
        }
        return nil
    }
}

/// Why a take has no mirror copy.
public struct MirrorRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
