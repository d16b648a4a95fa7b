import StageboxSystem
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct WakeupTests {
    /// A wakeup shared with a peer: a signal wakes the waiter, and the wait takes it, so the
    /// next wait sleeps again.
    @Test func aPeersSignalIsTakenByTheWait() throws {
        let (mine, theirs) = try Wakeup.pair(purpose: "a test")
        let peer = Wakeup(adopting: try #require(theirs.take()))
        #expect(!mine.wait(timeoutNanos: 0), "nothing sent yet")
        peer.signal()
        #expect(mine.wait(timeoutNanos: 1_000_000_000))
        #expect(!mine.wait(timeoutNanos: 0), "the wait took the wakeup")
        // And the other way round: the peer's end is a wakeup like any.
        mine.signal()
        #expect(peer.wait(timeoutNanos: 1_000_000_000))
    }

    /// A peer that floods: one drain takes at most 64 (a flood cannot hold the audio thread),
    /// and every one up to that (16 to a call; what is left stays for the next).
    @Test(arguments: [(64, 0), (65, 1), (70, 6), (15, 0), (16, 0), (17, 0)])
    func aDrainTakesAtMost64(sent: Int, left: Int) throws {
        let (mine, theirs) = try Wakeup.pair(purpose: "a test")
        let peer = try #require(theirs.take())
        var byte: UInt8 = 1
        // Each datagram costs about 1 KiB of the socket's ~208 KiB send buffer: all are sent.
        let accepted = (0..<sent).filter { _ in send(peer.rawValue, &byte, 1, Int32(MSG_DONTWAIT)) == 1 }.count
        try #require(accepted == sent)
        mine.drain()
        var more = 0
        while recv(mine.descriptor, &byte, 1, Int32(MSG_DONTWAIT)) == 1 { more += 1 }
        #expect(more == left, "\(sent) pending: one drain left \(more), not \(left)")
        try? peer.close()
    }

    /// Within the process (an eventfd): signals add up, and one wait takes them all.
    @Test func anEventfdsSignalsAreTakenAtOnce() throws {
        let wakeup = try Wakeup(purpose: "a test")
        for _ in 0..<3 { wakeup.signal() }
        #expect(wakeup.wait(timeoutNanos: 1_000_000_000))
        #expect(!wakeup.wait(timeoutNanos: 0))
    }
}
