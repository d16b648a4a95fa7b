import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The state document on disk: read at start, written atomically (a temporary file beside it,
/// fsync, rename over the old one, fsync of the directory), so that a power cut at any moment
/// leaves the old state or the new one, never neither, never a mix.
public struct StateFile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public enum Loaded: Sendable, Equatable {
        case missing
        case loaded(SavedState)
        /// Unreadable: set aside under `setAside` (nil when even renaming failed).
        case corrupt(problem: String, setAside: String?)
    }

    /// Reads the state; a corrupt or unreadable file is renamed to PATH.corrupt-SECONDS so the
    /// next write does not bury it, and the caller runs on the configuration.
    public func load(now seconds: Int) -> Loaded {
        let text: String
        do {
            text = try WholeFile.read(path)
        } catch {
            if error.errno == .noSuchFileOrDirectory { return .missing }
            return .corrupt(problem: error.description, setAside: setAside(seconds))
        }
        do {
            return .loaded(try SavedState.parse(text))
        } catch {
            return .corrupt(problem: error.description, setAside: setAside(seconds))
        }
    }

    private func setAside(_ seconds: Int) -> String? {
        let aside = "\(path).corrupt-\(seconds)"
        return rename(path, aside) == 0 ? aside : nil
    }

    /// Writes `state` atomically (see the type).
    public func write(_ state: SavedState) throws(SystemCallError) {
        try WholeFile.write(state.text, to: path)
    }
}
