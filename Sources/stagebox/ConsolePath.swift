import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A path a command hands to the running stagebox as part of a console line (`update FILE`,
/// `diag bundle DIR`): stagebox reads it from its own working folder and splits the line on
/// spaces, so the command sends it absolute, and refuses one it cannot make absolute or that
/// has whitespace.
enum ConsolePath {
    /// `path` from the folder this command runs in, when it is relative; `what` names it in errors.
    static func absolute(_ path: String, _ what: String) throws -> String {
        if path.isEmpty { throw ValidationError("\(what) is an empty path") }
        var full = path
        if !path.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else {
                throw ValidationError("cannot tell the folder this command runs in (\(String(cString: strerror(errno)))): give \(what) as an absolute path")
            }
            defer { free(cwd) }
            let folder = String(cString: cwd)
            full = (folder == "/" ? "" : folder) + "/" + path
        }
        // The console line ("update PATH --force") holds 1024 bytes.
        if full.utf8.count > 1000 { throw ValidationError("\(what) '\(full.prefix(40))…' is \(full.utf8.count) bytes long (at most 1000)") }
        if full.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
            let whose = path.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) ? "" : " (the folder the command runs in has one)"
            throw ValidationError("\(what) '\(full)' has a space in it\(whose): the console splits its line on spaces; use a path without one")
        }
        return full
    }
}
