import Foundation

/// Under qemu-user (tools/cross/test sets STAGEBOX_UNDER_QEMU=1) every instruction of the debug
/// build is emulated, some twenty times slower than on this machine. The randomized and
/// hour-long suites run a tenth of their rounds (or seconds, or bytes) there: the aarch64 run
/// checks the same logic on the other CPU, and the x86_64 run keeps the full volume.
public enum Emulation {
    public static let isQEMUUser = ProcessInfo.processInfo.environment["STAGEBOX_UNDER_QEMU"] == "1"

    /// `native` on this machine, a tenth of it (at least one) under qemu-user.
    public static func scaled(_ native: Int) -> Int { isQEMUUser ? max(1, native / 10) : native }
}
