#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the bus socket is when nothing names one, the same for `stagebox run` and for every
/// client (the commands, the Swift and the C library), so that they find each other:
/// 1. `$STAGEBOX_SOCKET`;
/// 2. else `/run/stagebox/bus.sock` for root (the appliance);
/// 3. else `$XDG_RUNTIME_DIR/stagebox/bus.sock` (a desktop session);
/// 4. else `/tmp/stagebox-UID/bus.sock`.
/// A configuration file's `[bus] socket` comes between 1 and 2 for whoever reads that file.
public enum DefaultSocket {
    public static let environmentVariable = "STAGEBOX_SOCKET"

    /// `$STAGEBOX_SOCKET`, when it is set and not empty.
    public static var fromEnvironment: String? { nonEmpty(environmentVariable) }

    /// The socket by the rules above, for the calling process.
    public static var path: String {
        path(environment: fromEnvironment, uid: geteuid(), runtimeDirectory: nonEmpty("XDG_RUNTIME_DIR"))
    }

    /// The rules with their inputs given (for tests).
    public static func path(environment: String?, uid: uid_t, runtimeDirectory: String?) -> String {
        if let environment { return environment }
        if uid == 0 { return "/run/stagebox/bus.sock" }
        if let runtimeDirectory { return runtimeDirectory + "/stagebox/bus.sock" }
        return "/tmp/stagebox-\(uid)/bus.sock"
    }

    private static func nonEmpty(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
