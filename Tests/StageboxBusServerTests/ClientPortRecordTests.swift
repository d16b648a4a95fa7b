@testable import StageboxBusServer
import Testing

@Suite struct ClientPortRecordTests {
    /// A port's counts come from headers its client can write, each read as at most Int.max:
    /// their sum stops at Int.max instead of trapping the server (a filter has two rings).
    @Test func countsAClientWroteAddUpWithoutTrapping() {
        #expect(ClientPortRecord.total([Int.max, Int.max]) == Int.max)
        #expect(ClientPortRecord.total([Int.max, 1, Int.max]) == Int.max)
        #expect(ClientPortRecord.total([3, 4]) == 7)
        #expect(ClientPortRecord.total([]) == 0)
    }
}
