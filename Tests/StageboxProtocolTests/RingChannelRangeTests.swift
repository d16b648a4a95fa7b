import StageboxPortRules
import StageboxProtocol
import Testing

/// A ring carries one port's channels, or a separate-streams receiver's channels for each source
/// slot: its range follows the port rules' channel range.
@Suite struct RingChannelRangeTests {
    @Test func aRingHoldsUpToTheWidestPortTimesTheSourceSlots() throws {
        let widest = PortRules.channelRange.upperBound * SharedRing.sourceSlots
        #expect(SharedRing.channelRange == 1...widest)
        _ = try SharedRing.create(name: "one", channels: 1, capacity: 16)
        _ = try SharedRing.create(name: "widest", channels: widest, capacity: 16)
        #expect(throws: RingError.self) { _ = try SharedRing.create(name: "none", channels: 0, capacity: 16) }
        #expect(throws: RingError.self) { _ = try SharedRing.create(name: "wider", channels: widest + 1, capacity: 16) }
    }
}
