import Testing
import StageboxProtocol

@Suite struct DefaultSocketTests {
    @Test func theRulesInOrder() {
        #expect(DefaultSocket.path(environment: "/x/b.sock", uid: 0, runtimeDirectory: "/run/user/0") == "/x/b.sock")
        #expect(DefaultSocket.path(environment: nil, uid: 0, runtimeDirectory: "/run/user/0") == "/run/stagebox/bus.sock")
        #expect(DefaultSocket.path(environment: nil, uid: 1000, runtimeDirectory: "/run/user/1000")
                == "/run/user/1000/stagebox/bus.sock")
        #expect(DefaultSocket.path(environment: nil, uid: 1000, runtimeDirectory: nil) == "/tmp/stagebox-1000/bus.sock")
    }
}
