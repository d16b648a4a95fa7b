import CLinux
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system call that failed: what was being done, on what (a path, a device, a thread's
/// name), and why in words ("No such file or directory"). The one shape of the errors that
/// only carry an errno; modules keep a type of their own only where it says more.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done, as a phrase that reads before the subject: "opening", "bind on".
    public var operation: String
    /// What it was done to, when there is something to name.
    public var subject: String?
    public var errno: Errno

    public init(_ operation: String, _ subject: String? = nil, errno: Errno) {
        self.operation = operation
        self.subject = subject
        self.errno = errno
    }

    /// The error of the call that just failed on this thread.
    public static func last(_ operation: String, _ subject: String? = nil) -> SystemCallError {
        SystemCallError(operation, subject, errno: .last)
    }

    public var description: String {
        (subject.map { "\(operation) \($0)" } ?? operation) + ": \(errno)"
    }
}

extension Errno {
    /// This thread's errno, right after a call that failed (swift-system keeps its own
    /// accessor internal).
    public static var last: Errno { Errno(rawValue: errno) }
}

/// Calls `call` again while it fails with EINTR, and returns its result: the one loop for the
/// calls that swift-system does not wrap (sockets, semaphores). Inlined, allocates nothing.
@inlinable
public func retryingOnInterrupt<Result: FixedWidthInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result != -1 || errno != EINTR { return result }
    }
}

extension SystemCallError {
    /// Runs a swift-system call and names what failed. Its calls throw only `Errno`, untyped;
    /// anything else (there is nothing else today) is reported as an I/O error.
    public static func naming<Result>(_ operation: String, _ subject: String? = nil,
                                      _ call: () throws -> Result) throws(SystemCallError) -> Result {
        do { return try call() } catch {
            throw SystemCallError(operation, subject, errno: error as? Errno ?? .ioError)
        }
    }
}
