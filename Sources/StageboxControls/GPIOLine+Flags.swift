import CGPIOD

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The pull a line is requested with (libgpiod 1.6 request flags; kernel 5.5 or later).
public enum GPIOBias: String, Sendable, CaseIterable {
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    case disable
    /// Whatever the line has now (the device tree's or the firmware's setting).
    case asIs = "as-is"

    var requestFlag: Int32 {
        switch self {
        case .pullUp: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        case .disable: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .asIs: 0
        }
    }
}

/// One edge as the kernel reported it.
public struct GPIOEdgeEvent: Sendable, Equatable {
    /// `rising` is a change to the active level (with `activeLow`, a fall of the voltage).
    public var edge: GPIOLine.Edge
    /// The kernel's time stamp: CLOCK_MONOTONIC nanoseconds (the character device since 5.7).
    public var timeNanos: Int64
}

extension GPIOLine {
    /// Requests the line as an input reporting both edges, with a pull and, when `activeLow`,
    /// values and edges inverted by the kernel (pressed reads 1 whichever way it is wired).
    public func watchEdges(consumer: String, activeLow: Bool, bias: GPIOBias) throws(GPIOError) {
        let flags = bias.requestFlag | (activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0)
        if gpiod_line_request_both_edges_events_flags(line, consumer, flags) != 0 {
            throw GPIOError(chip: chipName, line: offset, what: "requesting edge events (\(bias.rawValue)\(activeLow ? ", active low" : ""))")
        }
    }

    /// Requests the line as an output at `value`; with `activeLow`, true drives it low.
    public func drive(consumer: String, value: Bool, activeLow: Bool) throws(GPIOError) {
        let flags = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        if gpiod_line_request_output_flags(line, consumer, flags, value ? 1 : 0) != 0 {
            throw GPIOError(chip: chipName, line: offset, what: "requesting the line as an output")
        }
    }

    /// The descriptor that polls readable when edges are waiting (lines watching edges only).
    public func eventDescriptor() throws(GPIOError) -> Int32 {
        let fd = gpiod_line_event_get_fd(line)
        if fd < 0 { throw GPIOError(chip: chipName, line: offset, what: "getting the event descriptor") }
        return fd
    }

    /// Reads the edges waiting (up to 16); call when the event descriptor polls readable.
    public func readEdges() throws(GPIOError) -> [GPIOEdgeEvent] {
        let fd = try eventDescriptor()
        var buffer = [gpiod_line_event](repeating: gpiod_line_event(), count: 16)
        let n = gpiod_line_event_read_fd_multiple(fd, &buffer, UInt32(buffer.count))
        if n < 0 { throw GPIOError(chip: chipName, line: offset, what: "reading edge events") }
        return buffer.prefix(Int(n)).map { event in
            GPIOEdgeEvent(edge: event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE) ? .rising : .falling,
                          timeNanos: Int64(event.ts.tv_sec) * 1_000_000_000 + Int64(event.ts.tv_nsec))
        }
    }

    /// Gives the line back to the kernel (also done when the line is freed; calling twice is fine).
    public func release() { gpiod_line_release(line) }
}
