import Foundation
@testable import StageboxBusServer
import Testing

/// The socket's group comes from /etc/group read directly (no NSS in a static binary).
@Suite struct SocketGroupTests {
    @Test func findsAGroupByNameAndIgnoresOthers() throws {
        let path = NSTemporaryDirectory() + "stagebox-group-\(getpid())"
        defer { unlink(path) }
        try "root:x:0:\naudiophile:x:7:\naudio:x:29:pi,stagebox\nbroken line\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect(BusServer.groupID(named: "audio", groupFile: path) == 29)
        #expect(BusServer.groupID(named: "root", groupFile: path) == 0)
        #expect(BusServer.groupID(named: "video", groupFile: path) == nil)
        #expect(BusServer.groupID(named: "audio", groupFile: path + ".missing") == nil)
    }
}
