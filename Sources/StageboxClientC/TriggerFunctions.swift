import StageboxClient
import StageboxPortRules
import Synchronization
import StageboxTriggers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A client's trigger for C: the Swift trigger, its bus name as a C string, and the slot its
/// callback finds the handle in.
final class TriggerHandle {
    let trigger: ClientTrigger
    let slot: HandleSlot
    let cName: UnsafeMutablePointer<CChar>

    init(_ trigger: ClientTrigger, slot: HandleSlot) {
        self.trigger = trigger
        self.slot = slot
        cName = strdup(trigger.name)
    }

    deinit { free(cName) }
}

/// Carries the C callback and its context into the trigger's Swift handler.
// @unchecked: a C function pointer and the caller's context pointer; the header documents the
// thread the callback runs on, and what the context points to is the caller's to guard.
private struct TriggerCallback: @unchecked Sendable {
    let function: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void
    let context: UnsafeMutableRawPointer?
}

/// The handle the callback is given, as a bit pattern (0: none). Set once the trigger exists,
/// emptied when it is removed. The callback holds a reference to the handle while it runs, so a
/// removal meanwhile (even from inside the callback) cannot free it under the callback.
final class HandleSlot: Sendable {
    private let bits = Mutex<UInt>(0)

    func set(_ handle: OpaquePointer?) { bits.withLock { $0 = handle.map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0))) } ?? 0 } }

    /// Calls `body` with the handle, retained for the call; nothing when it was removed.
    func withHandle(_ body: (OpaquePointer) -> Void) {
        let retained: UInt = bits.withLock { value in
            if let raw = UnsafeRawPointer(bitPattern: value) { _ = Unmanaged<TriggerHandle>.fromOpaque(raw).retain() }
            return value
        }
        guard let raw = UnsafeRawPointer(bitPattern: retained) else { return }
        body(OpaquePointer(raw))
        Unmanaged<TriggerHandle>.fromOpaque(raw).release()
    }
}

@_cdecl("stagebox_trigger_create")
public func stagebox_trigger_create(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ title: UnsafePointer<CChar>?,
                                    _ state: Int32,
                                    _ callback: (@convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void)?,
                                    _ context: UnsafeMutableRawPointer?,
                                    _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> OpaquePointer? {
    guard let client, let name, let callback else { report("missing argument", errorBuffer, size); return nil }
    guard let initial = UInt8(exactly: state).flatMap(TriggerState.init(rawValue:)) else {
        report("trigger state \(state) is out of range (\(TriggerState.numbered))", errorBuffer, size)
        return nil
    }
    let c = borrow(client, as: ClientHandle.self).client
    let call = TriggerCallback(function: callback, context: context)
    let slot = HandleSlot()
    do {
        let trigger = try c.createTrigger(name: String(cString: name), title: title.map { String(cString: $0) } ?? "",
                                          state: initial) { _ in
            slot.withHandle { call.function($0, call.context) }
        }
        let handle = retain(TriggerHandle(trigger, slot: slot))
        slot.set(handle)
        return handle
    } catch {
        report(error.description, errorBuffer, size)
        return nil
    }
}

@_cdecl("stagebox_trigger_set_state")
public func stagebox_trigger_set_state(_ trigger: OpaquePointer?, _ state: Int32,
                                       _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let trigger else { report("missing argument", errorBuffer, size); return -1 }
    guard let value = UInt8(exactly: state).flatMap(TriggerState.init(rawValue:)) else {
        report("trigger state \(state) is out of range (\(TriggerState.numbered))", errorBuffer, size)
        return -1
    }
    let t = borrow(trigger, as: TriggerHandle.self).trigger
    return cRequest(errorBuffer, size) { () throws(BusClientError) in try t.setState(value) }
}

@_cdecl("stagebox_trigger_state")
public func stagebox_trigger_state(_ trigger: OpaquePointer?) -> Int32 {
    trigger.map { Int32(borrow($0, as: TriggerHandle.self).trigger.state.rawValue) } ?? -1
}

@_cdecl("stagebox_trigger_name")
public func stagebox_trigger_name(_ trigger: OpaquePointer?) -> UnsafePointer<CChar>? {
    trigger.map { UnsafePointer(borrow($0, as: TriggerHandle.self).cName) }
}

@_cdecl("stagebox_trigger_remove")
public func stagebox_trigger_remove(_ trigger: OpaquePointer?) {
    guard let trigger else { return }
    let handle = borrow(trigger, as: TriggerHandle.self)
    handle.slot.set(nil)
    try? handle.trigger.remove()
    release(trigger, as: TriggerHandle.self)
}
