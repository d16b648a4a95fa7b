#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A folder's entries.
public enum Folder {
    /// The names in `path`, sorted, without `.` and `..`; none when it cannot be opened.
    public static func names(in path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

extension String {
    /// Whether this path is `folder` or inside it ("/media/TAKES/takes" is inside "/media/TAKES").
    public func isInside(_ folder: String) -> Bool { self == folder || hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") }
}
