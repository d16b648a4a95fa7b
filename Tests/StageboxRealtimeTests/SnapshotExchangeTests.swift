import Testing
import StageboxRealtime

private final class Node: ChainedSnapshot, @unchecked Sendable {
    let id: Int
    let successor: Node?
    init(_ id: Int, successor: Node? = nil) { self.id = id; self.successor = successor }
}

@Suite struct SnapshotExchangeTests {
    @Test func theAudioSidePicksUpTheNewestAndReleasesNothingItself() {
        let exchange = SnapshotExchange(initial: Node(0))
        #expect(exchange.acquire().takeUnretainedValue().id == 0)
        exchange.publish(Node(1))
        exchange.publish(Node(2)) // replaces 1 before the audio side saw it
        #expect(exchange.aliveCount == 2)
        #expect(exchange.acquire().takeUnretainedValue().id == 2)
        exchange.collect()
        #expect(exchange.aliveCount == 1, "the retired initial snapshot is released on the control side")
    }

    @Test func aChainedSnapshotRunsOnceThenItsSuccessor() {
        let exchange = SnapshotExchange(initial: Node(0))
        exchange.publish(Node(1, successor: Node(2)))
        #expect(exchange.acquire().takeUnretainedValue().id == 1)
        exchange.advance()
        #expect(exchange.acquire().takeUnretainedValue().id == 2)
        exchange.advance()
        #expect(exchange.acquire().takeUnretainedValue().id == 2)
        exchange.collect()
        #expect(exchange.aliveCount == 1)
    }
}
