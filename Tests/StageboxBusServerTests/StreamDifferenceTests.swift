import StageboxTestSupport
import Testing

extension BusTests {
    /// The checker the bit-exact stream tests rely on lets through only what the bus may do.
    @Suite struct StreamDifferenceTests {
        let sent: [Int16] = (1...8).flatMap { [Int16($0), Int16(-$0)] }

        @Test func silenceBeforeAndInsideTheStreamIsAllowed() {
            let received: [Int16] = [0, 0] + sent[0..<6] + [0, 0, 0, 0] + sent[6...] + [0, 0]
            #expect(streamDifference(received: received, sent: sent, channels: 2, mayDrop: false) == nil)
        }

        @Test func aChangedSampleIsFound() {
            var received = sent
            received[5] = 99
            #expect(streamDifference(received: received, sent: sent, channels: 2, mayDrop: true)?.contains("received frame 2") == true)
        }

        @Test func missingFramesPassOnlyWhenTheReceiverOverran() {
            let received = Array(sent[0..<4] + sent[10...])
            #expect(streamDifference(received: received, sent: sent, channels: 2, mayDrop: false)?.contains("no overrun") == true)
            #expect(streamDifference(received: received, sent: sent, channels: 2, mayDrop: true) == nil)
        }

        @Test func reorderedOrUnfinishedStreamsFail() {
            let swapped = Array(sent[4..<6] + sent[2..<4] + sent[6...])
            #expect(streamDifference(received: sent[0..<2] + swapped, sent: sent, channels: 2, mayDrop: true) != nil)
            #expect(streamDifference(received: Array(sent[0..<12]), sent: sent, channels: 2, mayDrop: false) == "6 of 8 frames sent arrived (0 dropped in overruns)")
            #expect(streamDifference(received: Array(sent[0..<12]), sent: sent, channels: 2, mayDrop: true) == nil,
                    "a reader a ring behind as the stream ended loses its end to overruns")
            #expect(streamDifference(received: [0, 0, 0, 0], sent: sent, channels: 2, mayDrop: true) == "none of the 8 frames sent arrived")
        }
    }
}
