import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A path a command hands to the running stagebox as part of a console line (`update FILE`,
/// `diag bundle DIR`): stagebox reads it from its own working folder and splits the line on
/// spaces, so the command makes it absolute and refuses one with whitespace.
enum ConsolePath {
    static func check(_ path: String, _ what: String) throws {
        if path.isEmpty { throw ValidationError("\(what) is an empty path") }
        if path.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
            throw ValidationError("\(what) '\(path)' has a space in it: the console splits its line on spaces; use a path without one")
        }
    }

    /// `path` from the folder this command runs in, when it is relative.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let folder = String(cString: cwd)
        return (folder == "/" ? "" : folder) + "/" + path
    }
}
