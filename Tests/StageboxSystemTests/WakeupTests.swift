import StageboxSystem
import SystemPackage
import Testing

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
    /// and drains after it take the rest, in calls of 16.
    @Test func aFloodIsTakenAtMost64AtATime() throws {
        let (mine, theirs) = try Wakeup.pair(purpose: "a test")
        let peer = Wakeup(adopting: try #require(theirs.take()))
        for _ in 0..<70 { peer.signal() } // within a socket's send buffer (each datagram costs ~1 KiB of it)
        mine.drain()
        #expect(mine.wait(timeoutNanos: 0), "6 of the 70 are still pending after one drain")
        // The wait's own drain took the rest.
        #expect(!mine.wait(timeoutNanos: 0), "all 70 taken")
    }

    /// Within the process (an eventfd): signals add up, and one wait takes them all.
    @Test func anEventfdsSignalsAreTakenAtOnce() throws {
        let wakeup = try Wakeup(purpose: "a test")
        for _ in 0..<3 { wakeup.signal() }
        #expect(wakeup.wait(timeoutNanos: 1_000_000_000))
        #expect(!wakeup.wait(timeoutNanos: 0))
    }
}
