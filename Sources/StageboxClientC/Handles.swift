import StageboxClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The C library (include/stagebox_client.h): thin @_cdecl functions over the Swift client
// library. Every C handle is a retained Swift object; its name, handed out as `const char *`,
// is kept in a C string the object owns.

final class ClientHandle {
    let client: BusClient
    init(_ client: BusClient) { self.client = client }
}

final class PortHandle {
    let sender: SenderPort?
    let receiver: ReceiverPort?
    let filter: FilterPort?
    let cName: UnsafeMutablePointer<CChar>

    init(sender: SenderPort? = nil, receiver: ReceiverPort? = nil, filter: FilterPort? = nil, name: String) {
        self.sender = sender
        self.receiver = receiver
        self.filter = filter
        cName = strdup(name)
    }

    deinit { free(cName) }
}

/// Copies `text` into the caller's error buffer, if it gave one.
func report(_ text: String, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) {
    guard let buffer, size > 0 else { return }
    let bytes = Array(text.utf8.prefix(size - 1))
    for (i, b) in bytes.enumerated() { buffer[i] = CChar(bitPattern: b) }
    buffer[bytes.count] = 0
}

func retain<T: AnyObject>(_ object: T) -> OpaquePointer { OpaquePointer(Unmanaged.passRetained(object).toOpaque()) }
func borrow<T: AnyObject>(_ pointer: OpaquePointer, as _: T.Type) -> T {
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
}
func release<T: AnyObject>(_ pointer: OpaquePointer, as _: T.Type) {
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(pointer)).release()
}

/// Runs a bus request for C: 0 on success, -1 with the message in the error buffer.
func cRequest(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ body: () throws(BusClientError) -> Void) -> Int32 {
    do {
        try body()
        return 0
    } catch {
        report(error.description, buffer, size)
        return -1
    }
}
