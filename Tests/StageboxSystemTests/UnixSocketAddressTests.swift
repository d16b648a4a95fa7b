import StageboxSystem
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct UnixSocketAddressTests {
    @Test func aPathTooLongIsRefusedNamingIt() {
        let path = "/run/" + String(repeating: "stagebox/", count: 13) + "bus.sock"
        #expect(path.utf8.count > UnixSocketAddress.maximumPathLength)
        do {
            _ = try UnixSocketAddress(path: path)
            Issue.record("a \(path.utf8.count)-byte path was accepted")
        } catch {
            #expect(error.path == path)
            #expect(error.description.contains(path))
            #expect(error.description.contains("at most \(UnixSocketAddress.maximumPathLength)"))
        }
    }

    @Test func aPathOfTheLongestLengthIsTaken() throws {
        let path = "/" + String(repeating: "x", count: UnixSocketAddress.maximumPathLength - 1)
        #expect(throws: Never.self) { try UnixSocketAddress(path: path) }
    }

    @Test func aServerAndAClientMeetAtTheAddress() throws {
        let path = "/tmp/stagebox-address-\(getpid()).sock"
        unlink(path)
        defer { unlink(path) }
        let address = try UnixSocketAddress(path: path)
        let server = try UnixSocket.stream(nonBlocking: false)
        defer { try? server.close() }
        try address.bind(server)
        #expect(listen(server.rawValue, 1) == 0)
        let client = try UnixSocket.stream(nonBlocking: false)
        defer { try? client.close() }
        try address.connect(client)
    }

    @Test func connectingWhereNobodyListensSaysWhyInWords() throws {
        let address = try UnixSocketAddress(path: "/tmp/stagebox-nobody-\(getpid()).sock")
        let client = try UnixSocket.stream(nonBlocking: false)
        defer { try? client.close() }
        #expect(throws: Errno.noSuchFileOrDirectory) { try address.connect(client) }
    }
}

@Suite struct SystemCallErrorTests {
    @Test func theMessageNamesWhatFailedWhereAndWhyInWords() throws {
        let path = "/nonexistent/stagebox-\(getpid())"
        do {
            _ = try SystemCallError.naming("opening", path) { try FileDescriptor.open(path, .readOnly) }
            Issue.record("opening \(path) succeeded")
        } catch {
            #expect(error.errno == .noSuchFileOrDirectory)
            #expect(error.description == "opening \(path): No such file or directory")
        }
    }

    @Test func theLastErrorIsThisThreadsErrno() {
        #expect(close(-1) == -1)
        let error = SystemCallError.last("closing", "descriptor -1")
        #expect(error.errno == .badFileDescriptor)
        #expect(error.description == "closing descriptor -1: Bad file descriptor")
    }

    @Test func anInterruptedCallIsRetriedAndOthersAreNot() {
        var calls = 0
        let result = retryingOnInterrupt { () -> Int32 in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        #expect(result == 7 && calls == 3)
        calls = 0
        let failed = retryingOnInterrupt { () -> Int32 in calls += 1; errno = EAGAIN; return -1 }
        #expect(failed == -1 && calls == 1)
    }
}
