import StageboxProtocol
import StageboxSystem
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether `fd` is an open descriptor of this process (fcntl fails with EBADF once closed).
private func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 }

/// Serialized, and run alone by tools/test: each test checks a number is closed, and a test
/// running beside it may be given that number for a file of its own meanwhile (CI saw it once).
@Suite(.serialized) struct OwnedDescriptorTests {
    @Test func itClosesWhenItGoesAway() throws {
        var owned: OwnedDescriptor? = OwnedDescriptor(try FileDescriptor.open("/dev/null", .readOnly))
        let raw = try #require(owned?.descriptor?.rawValue)
        #expect(isOpen(raw))
        owned = nil
        #expect(fcntl(raw, F_GETFD) == -1)
        #expect(errno == EBADF)
    }

    @Test func aTakenDescriptorIsTheTakersToClose() throws {
        var owned: OwnedDescriptor? = OwnedDescriptor(try FileDescriptor.open("/dev/null", .readOnly))
        let taken = try #require(owned?.take())
        #expect(owned?.take() == nil, "taken only once")
        #expect(owned?.descriptor == nil)
        owned = nil
        #expect(isOpen(taken.rawValue))
        try taken.close()
    }

    @Test func descriptorsAttachedToAMessageArriveOwned() throws {
        var pair: [Int32] = [-1, -1]
        #if canImport(Musl)
        let stream = SOCK_STREAM // a plain macro in musl, an enum constant in glibc
        #else
        let stream = Int32(SOCK_STREAM.rawValue)
        #endif
        #expect(socketpair(AF_UNIX, stream, 0, &pair) == 0)
        let (a, b) = (FileDescriptor(rawValue: pair[0]), FileDescriptor(rawValue: pair[1]))
        defer { try? a.close(); try? b.close() }
        let attached = try FileDescriptor.open("/dev/null", .readOnly)
        let bytes: [UInt8] = [1, 2, 3]
        let sent = try bytes.withUnsafeBytes { raw in
            try DescriptorPassing.send(a, raw, descriptors: [attached])
        }
        #expect(sent == 3)
        try attached.close()

        var buffer = [UInt8](repeating: 0, count: 16)
        var raw: Int32 = -1
        do {
            let received = try buffer.withUnsafeMutableBytes { raw in
                try DescriptorPassing.receive(b, into: raw)
            }
            #expect(received.count == 3)
            #expect(received.descriptors.count == 1)
            raw = try #require(received.descriptors.first?.descriptor?.rawValue)
            #expect(isOpen(raw))
        }
        // Nobody took it (a message that should carry none, an answer nobody wanted): it closed
        // with the message.
        #expect(!isOpen(raw))
    }

    @Test func aRingThatCannotBeMappedLeavesItsDescriptorClosedWithItsOwner() throws {
        // /dev/null is not a ring: mapping fails, and the descriptor stays owned until dropped.
        var owned: OwnedDescriptor? = OwnedDescriptor(try FileDescriptor.open("/dev/null", .readOnly))
        let raw = try #require(owned?.descriptor?.rawValue)
        #expect(throws: RingError.self) { try SharedRing.map(owned!) }
        #expect(isOpen(raw))
        owned = nil
        #expect(!isOpen(raw))
    }

    @Test func aMappedRingOwnsItsDescriptor() throws {
        let server = try SharedRing.create(name: "owned", channels: 1, capacity: 64)
        let copy = OwnedDescriptor(try server.fileDescriptor.duplicate())
        let raw = try #require(copy.descriptor?.rawValue)
        var client: SharedRing? = try SharedRing.map(copy)
        #expect(copy.descriptor == nil, "the ring took it")
        #expect(isOpen(raw))
        client = nil
        #expect(!isOpen(raw))
        _ = client
    }
}
