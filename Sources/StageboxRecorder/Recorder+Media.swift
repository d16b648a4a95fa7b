import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The recorder and removable media (USB sticks): what a pull cut is mended when the stick
/// comes back, and a copy on a pulled stick ends at once.
extension Recorder {
    /// The folder on a stick that holds takes: the mirror's copies and `takes copy`'s.
    public static let stickFolder = "takes"
    /// The suffix of a file `takes copy` has not finished: removed when its stick comes back.
    public static let unfinishedCopySuffix = ".copying"

    /// A stick was mounted at `mountPoint`. Its takes (a mirror's copy cut by a pull) are
    /// checked and repaired as takes are after a power cut, and unfinished copies removed.
    /// Returns a line for each thing done, for the log.
    /// `shownAs`: where the stick will be found (the log names that), when it is mended at
    /// another mount point first.
    @discardableResult
    public func mediumMounted(_ mountPoint: String, shownAs: String? = nil) -> [String] {
        let folder = mountPoint + "/" + Self.stickFolder
        let shown = (shownAs ?? mountPoint) + "/" + Self.stickFolder
        var done: [String] = []
        for name in Folder.names(in: folder) where name.hasSuffix(Self.unfinishedCopySuffix) {
            if unlink(folder + "/" + name) == 0 { done.append("\(shown)/\(name): an unfinished copy, removed") }
        }
        for (file, outcome) in TakeRepair.repairAll(in: folder) {
            if case let .repaired(headerFrames, frames, droppedBytes, _) = outcome {
                done.append("\(shown)/\(file) repaired: the header said \(headerFrames) frames, the file holds \(frames)"
                    + (droppedBytes > 0 ? "; \(droppedBytes) bytes of a torn last frame cut" : ""))
            }
        }
        for line in done { logger.warning("recorder: \(line)") }
        return done
    }

    /// The stick mounted at `mountPoint` went (`pulled`, or ejected): a copy on it ends now.
    public func mediumGone(_ mountPoint: String, pulled: Bool) {
        mirror?.mediumGone(mountPoint, reason: pulled ? "the stick at \(mountPoint) was pulled" : "the stick at \(mountPoint) was ejected")
    }
}
