#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a descriptor to its end, retrying reads a signal interrupted. (Foundation's
/// `readDataToEndOfFile` traps on EINTR, and test processes get SIGCHLD from their children.)
public func readToEnd(_ fd: Int32) -> [UInt8] {
    var all: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 { all += buffer[0..<n]; continue }
        if n < 0 && errno == EINTR { continue }
        return all
    }
}

/// The same, as text.
public func readTextToEnd(_ fd: Int32) -> String { String(decoding: readToEnd(fd), as: UTF8.self) }
