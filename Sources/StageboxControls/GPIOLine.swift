import CGPIOD
import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a GPIO line could not be used; names the chip and line (which a path alone would not).
public struct GPIOError: Error, Sendable, CustomStringConvertible {
    public var chip: String
    public var line: Int
    public var what: String
    public var errno: Errno

    /// The error of the libgpiod call that just failed on this thread.
    init(chip: String, line: Int, what: String) {
        self.chip = chip
        self.line = line
        self.what = what
        errno = .last
    }

    public var description: String { "GPIO \(chip) line \(line): \(what) failed: \(errno)" }
}

/// One line of a GPIO chip through the character device (libgpiod 1.6), never sysfs.
public final class GPIOLine: @unchecked Sendable {
    // @unchecked: the chip and line handles are immutable pointers; a line is driven or watched
    // by one thread at a time (libgpiod's handles are not for concurrent calls).
    public enum Edge: Sendable, Equatable { case rising, falling }

    public let chipName: String
    public let offset: Int
    let chip: OpaquePointer
    let line: OpaquePointer

    /// Opens `chip` (a name like `gpiochip0`, a path, a label or a number) and takes line `offset`.
    public init(chip: String, offset: Int) throws(GPIOError) {
        chipName = chip
        self.offset = offset
        guard let c = gpiod_chip_open_lookup(chip) else {
            throw GPIOError(chip: chip, line: offset, what: "opening the chip")
        }
        guard let l = gpiod_chip_get_line(c, UInt32(offset)) else {
            let error = GPIOError(chip: chip, line: offset, what: "getting the line")
            gpiod_chip_close(c)
            throw error
        }
        self.chip = c
        self.line = l
    }

    deinit {
        gpiod_line_release(line)
        gpiod_chip_close(chip)
    }

    /// Requests the line as an input that reports both edges.
    public func watchEdges(consumer: String) throws(GPIOError) {
        if gpiod_line_request_both_edges_events(line, consumer) != 0 {
            throw GPIOError(chip: chipName, line: offset, what: "requesting edge events")
        }
    }

    /// Waits up to `timeoutNanos` for an edge; nil on timeout.
    public func waitForEdge(timeoutNanos: Int64) throws(GPIOError) -> Edge? {
        var ts = timespec(tv_sec: Int(timeoutNanos / 1_000_000_000), tv_nsec: Int(timeoutNanos % 1_000_000_000))
        let rc = gpiod_line_event_wait(line, &ts)
        if rc < 0 { throw GPIOError(chip: chipName, line: offset, what: "waiting for an edge") }
        if rc == 0 { return nil }
        var event = gpiod_line_event()
        if gpiod_line_event_read(line, &event) != 0 {
            throw GPIOError(chip: chipName, line: offset, what: "reading the edge")
        }
        return event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE) ? .rising : .falling
    }

    /// Requests the line as an output at `value`.
    public func drive(consumer: String, value: Bool) throws(GPIOError) {
        if gpiod_line_request_output(line, consumer, value ? 1 : 0) != 0 {
            throw GPIOError(chip: chipName, line: offset, what: "requesting the line as an output")
        }
    }

    /// Sets an output line.
    public func set(_ value: Bool) throws(GPIOError) {
        if gpiod_line_set_value(line, value ? 1 : 0) != 0 {
            throw GPIOError(chip: chipName, line: offset, what: "setting the value")
        }
    }

    /// Reads the line's level (requested lines only).
    public func value() throws(GPIOError) -> Bool {
        let v = gpiod_line_get_value(line)
        if v < 0 { throw GPIOError(chip: chipName, line: offset, what: "reading the value") }
        return v == 1
    }
}
