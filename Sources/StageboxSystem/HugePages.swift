import CLinux

/// Transparent huge pages, which Stagebox's processes do without.
public enum HugePages {
    /// Asks the kernel for no transparent huge pages in this process and the children it starts.
    /// Where THP is "always" (Debian's arm64 kernel), the first touch of a thread's malloc arena
    /// or stack can take a whole 2 MiB page for a few KiB of use: on a 512 MB board, and locked
    /// in the server, that is pure loss. Call it before any thread starts. False where the kernel
    /// refuses: one older than Linux 3.15, or a seccomp filter that forbids the call.
    @discardableResult
    public static func refuse() -> Bool {
        stagebox_refuse_huge_pages() == 0
    }
}
