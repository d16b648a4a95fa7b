import StageboxClient

@_cdecl("stagebox_connect")
public func stagebox_connect(_ path: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>?,
                             _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> OpaquePointer? {
    guard let name else { report("a client name is needed", errorBuffer, size); return nil }
    let socket = path.map { String(cString: $0) } ?? BusClient.defaultSocketPath
    do {
        return retain(ClientHandle(try BusClient(name: String(cString: name), socketPath: socket)))
    } catch {
        report(error.description, errorBuffer, size)
        return nil
    }
}

@_cdecl("stagebox_disconnect")
public func stagebox_disconnect(_ client: OpaquePointer?) {
    guard let client else { return }
    borrow(client, as: ClientHandle.self).client.close()
    release(client, as: ClientHandle.self)
}

@_cdecl("stagebox_bus_sample_rate")
public func stagebox_bus_sample_rate(_ client: OpaquePointer?) -> Int32 {
    client.map { Int32(borrow($0, as: ClientHandle.self).client.sampleRate) } ?? -1
}

@_cdecl("stagebox_bus_period")
public func stagebox_bus_period(_ client: OpaquePointer?) -> Int32 {
    client.map { Int32(borrow($0, as: ClientHandle.self).client.period) } ?? -1
}

@_cdecl("stagebox_connect_ports")
public func stagebox_connect_ports(_ client: OpaquePointer?, _ from: UnsafePointer<CChar>?, _ to: UnsafePointer<CChar>?,
                                   _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let client, let from, let to else { report("missing argument", errorBuffer, size); return -1 }
    let c = borrow(client, as: ClientHandle.self).client
    return cRequest(errorBuffer, size) { () throws(BusClientError) in try c.connect(from: String(cString: from), to: String(cString: to)) }
}

@_cdecl("stagebox_disconnect_ports")
public func stagebox_disconnect_ports(_ client: OpaquePointer?, _ from: UnsafePointer<CChar>?, _ to: UnsafePointer<CChar>?,
                                      _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let client, let from, let to else { report("missing argument", errorBuffer, size); return -1 }
    let c = borrow(client, as: ClientHandle.self).client
    return cRequest(errorBuffer, size) { () throws(BusClientError) in try c.disconnect(from: String(cString: from), to: String(cString: to)) }
}

@_cdecl("stagebox_set_muted")
public func stagebox_set_muted(_ client: OpaquePointer?, _ port: UnsafePointer<CChar>?, _ muted: Int32,
                               _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let client, let port else { report("missing argument", errorBuffer, size); return -1 }
    let c = borrow(client, as: ClientHandle.self).client
    return cRequest(errorBuffer, size) { () throws(BusClientError) in try c.setMuted(String(cString: port), muted != 0) }
}

@_cdecl("stagebox_fire_trigger")
public func stagebox_fire_trigger(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                  _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let client, let name else { report("missing argument", errorBuffer, size); return -1 }
    let c = borrow(client, as: ClientHandle.self).client
    return cRequest(errorBuffer, size) { () throws(BusClientError) in try c.fireTrigger(String(cString: name)) }
}

@_cdecl("stagebox_connection_lost")
public func stagebox_connection_lost(_ client: OpaquePointer?, _ errorBuffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int32 {
    guard let client else { return 1 }
    guard let why = borrow(client, as: ClientHandle.self).client.connection.lostReason else { return 0 }
    report("connection to stagebox lost: \(why)", errorBuffer, size)
    return 1
}
