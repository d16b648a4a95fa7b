import StageboxClient

@_cdecl("stagebox_add_sender")
public func stagebox_add_sender(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ channels: Int32, _ rate: Int32,
                                _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> OpaquePointer? {
    guard let client, let name else { report("missing argument", errorBuffer, size); return nil }
    let c = borrow(client, as: ClientHandle.self).client
    do {
        let port = try c.addSender(name: String(cString: name), channels: Int(channels), sampleRate: rate > 0 ? Int(rate) : nil)
        return retain(PortHandle(sender: port, name: port.name))
    } catch {
        report(error.description, errorBuffer, size)
        return nil
    }
}

@_cdecl("stagebox_add_receiver")
public func stagebox_add_receiver(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ channels: Int32, _ rate: Int32,
                                  _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> OpaquePointer? {
    guard let client, let name else { report("missing argument", errorBuffer, size); return nil }
    let c = borrow(client, as: ClientHandle.self).client
    do {
        let port = try c.addReceiver(name: String(cString: name), channels: Int(channels), sampleRate: rate > 0 ? Int(rate) : nil)
        return retain(PortHandle(receiver: port, name: port.name))
    } catch {
        report(error.description, errorBuffer, size)
        return nil
    }
}

/// Carries a C function pointer and its context into the filter's Swift closure.
// @unchecked: a C function pointer and the caller's context pointer; the C API documents that
// the callback runs on the filter's thread, and what the context points to is the caller's to guard.
private struct FilterCallback: @unchecked Sendable {
    let function: @convention(c) (UnsafeMutablePointer<Float>?, Int32, Int32, UnsafeMutableRawPointer?) -> Void
    let context: UnsafeMutableRawPointer?
}

@_cdecl("stagebox_add_filter")
public func stagebox_add_filter(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ channels: Int32,
                                _ process: (@convention(c) (UnsafeMutablePointer<Float>?, Int32, Int32, UnsafeMutableRawPointer?) -> Void)?,
                                _ context: UnsafeMutableRawPointer?,
                                _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> OpaquePointer? {
    guard let client, let name, let process else { report("missing argument", errorBuffer, size); return nil }
    let c = borrow(client, as: ClientHandle.self).client
    let callback = FilterCallback(function: process, context: context)
    do {
        let port = try c.addFilter(name: String(cString: name), channels: Int(channels)) { samples, frames, _ in
            callback.function(samples, Int32(frames), channels, callback.context)
        }
        return retain(PortHandle(filter: port, name: port.name))
    } catch {
        report(error.description, errorBuffer, size)
        return nil
    }
}

@_cdecl("stagebox_port_remove")
public func stagebox_port_remove(_ port: OpaquePointer?) {
    guard let port else { return }
    borrow(port, as: PortHandle.self).filter?.stop()
    release(port, as: PortHandle.self)
}

@_cdecl("stagebox_port_name")
public func stagebox_port_name(_ port: OpaquePointer?) -> UnsafePointer<CChar>? {
    port.map { UnsafePointer(borrow($0, as: PortHandle.self).cName) }
}

@_cdecl("stagebox_port_is_connected")
public func stagebox_port_is_connected(_ port: OpaquePointer?) -> Int32 {
    guard let port else { return 0 }
    let p = borrow(port, as: PortHandle.self)
    return (p.sender?.isConnected ?? p.receiver?.isConnected ?? false) ? 1 : 0
}

@_cdecl("stagebox_port_is_muted")
public func stagebox_port_is_muted(_ port: OpaquePointer?) -> Int32 {
    guard let port else { return 0 }
    let p = borrow(port, as: PortHandle.self)
    return (p.sender?.isMuted ?? p.receiver?.isMuted ?? false) ? 1 : 0
}

@_cdecl("stagebox_send_float")
public func stagebox_send_float(_ port: OpaquePointer?, _ samples: UnsafePointer<Float>?, _ frames: Int32) -> Int32 {
    guard let port, let samples, frames >= 0, let s = borrow(port, as: PortHandle.self).sender else { return -1 }
    s.send(samples, frames: Int(frames))
    return 0
}

@_cdecl("stagebox_send_int16")
public func stagebox_send_int16(_ port: OpaquePointer?, _ samples: UnsafePointer<Int16>?, _ frames: Int32) -> Int32 {
    guard let port, let samples, frames >= 0, let s = borrow(port, as: PortHandle.self).sender else { return -1 }
    s.send(int16: samples, frames: Int(frames))
    return 0
}

@_cdecl("stagebox_receive_float")
public func stagebox_receive_float(_ port: OpaquePointer?, _ samples: UnsafeMutablePointer<Float>?, _ frames: Int32) -> Int32 {
    guard let port, let samples, frames >= 0, let r = borrow(port, as: PortHandle.self).receiver else { return -1 }
    return r.receive(into: samples, frames: Int(frames)) ? 1 : 0
}

@_cdecl("stagebox_receive_int16")
public func stagebox_receive_int16(_ port: OpaquePointer?, _ samples: UnsafeMutablePointer<Int16>?, _ frames: Int32) -> Int32 {
    guard let port, let samples, frames >= 0, let r = borrow(port, as: PortHandle.self).receiver else { return -1 }
    return r.receive(int16: samples, frames: Int(frames)) ? 1 : 0
}

@_cdecl("stagebox_wait_space")
public func stagebox_wait_space(_ port: OpaquePointer?, _ frames: Int32, _ timeoutMs: Int32) -> Int32 {
    guard let port, let s = borrow(port, as: PortHandle.self).sender else { return -1 }
    return s.waitForSpace(frames: Int(frames), timeoutSeconds: Double(timeoutMs) / 1000) ? 1 : 0
}

@_cdecl("stagebox_wait_data")
public func stagebox_wait_data(_ port: OpaquePointer?, _ frames: Int32, _ timeoutMs: Int32) -> Int32 {
    guard let port, let r = borrow(port, as: PortHandle.self).receiver else { return -1 }
    return r.waitForData(frames: Int(frames), timeoutSeconds: Double(timeoutMs) / 1000) ? 1 : 0
}

@_cdecl("stagebox_drain")
public func stagebox_drain(_ port: OpaquePointer?, _ timeoutMs: Int32) -> Int32 {
    guard let port, let s = borrow(port, as: PortHandle.self).sender else { return -1 }
    return s.drain(timeoutSeconds: Double(timeoutMs) / 1000) ? 1 : 0
}

/// Matches `stagebox_port_stats` in the header.
public struct CPortStats {
    public var underruns: Int64
    public var overruns: Int64
    public var fillFrames: Int32
    public var ratio: Double
}

@_cdecl("stagebox_port_get_stats")
public func stagebox_port_get_stats(_ port: OpaquePointer?, _ stats: UnsafeMutableRawPointer?) {
    guard let port, let stats else { return }
    let p = borrow(port, as: PortHandle.self)
    let value: CPortStats
    if let s = p.sender {
        value = CPortStats(underruns: Int64(s.underruns), overruns: Int64(s.overruns), fillFrames: Int32(s.fill), ratio: s.ratio)
    } else if let r = p.receiver {
        value = CPortStats(underruns: Int64(r.underruns), overruns: Int64(r.overruns), fillFrames: Int32(r.fill), ratio: r.ratio)
    } else {
        value = CPortStats(underruns: 0, overruns: 0, fillFrames: 0, ratio: 1)
    }
    // Field by field, at the C struct's offsets (int64, int64, int32, then a double at 24).
    stats.storeBytes(of: value.underruns, as: Int64.self)
    stats.storeBytes(of: value.overruns, toByteOffset: 8, as: Int64.self)
    stats.storeBytes(of: value.fillFrames, toByteOffset: 16, as: Int32.self)
    stats.storeBytes(of: value.ratio, toByteOffset: 24, as: Double.self)
}

@_cdecl("stagebox_port_descriptor")
public func stagebox_port_descriptor(_ port: OpaquePointer?) -> Int32 {
    guard let port else { return -1 }
    let p = borrow(port, as: PortHandle.self)
    return p.sender?.wakeupDescriptor ?? p.receiver?.wakeupDescriptor ?? -1
}

@_cdecl("stagebox_port_take_wakeups")
public func stagebox_port_take_wakeups(_ port: OpaquePointer?) {
    guard let port else { return }
    let p = borrow(port, as: PortHandle.self)
    p.sender?.takeWakeups()
    p.receiver?.takeWakeups()
}

@_cdecl("stagebox_port_pending")
public func stagebox_port_pending(_ port: OpaquePointer?) -> Int32 {
    guard let port else { return -1 }
    let p = borrow(port, as: PortHandle.self)
    return Int32(clamping: p.sender?.pendingFrames ?? p.receiver?.pendingFrames ?? -1)
}
