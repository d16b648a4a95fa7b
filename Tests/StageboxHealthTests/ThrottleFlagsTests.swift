import StageboxHealth
import Testing

@Suite struct ThrottleFlagsTests {
    @Test func theFirmwaresWordIsReadAsItsBits() throws {
        // 0x50005: under-voltage and throttled now, and both seen since boot.
        let flags = try #require(ThrottleFlags(text: "0x50005\n"))
        #expect(flags == [.underVoltage, .throttled, .underVoltageOccurred, .throttledOccurred])
        #expect(flags.nowWords == ["under-voltage", "throttled"])
        #expect(flags.sinceBootWords == ["under-voltage", "throttled"])
        #expect(ThrottleFlags(text: "80000") == [.softTemperatureLimitOccurred])
        #expect(ThrottleFlags(text: "0") == [])
    }

    @Test func textThatIsNotHexadecimalIsNoReading() {
        #expect(ThrottleFlags(text: "") == nil)
        #expect(ThrottleFlags(text: "0x") == nil)
        #expect(ThrottleFlags(text: "throttled=0x0") == nil)
        #expect(ThrottleFlags(text: "123456789") == nil) // more than 32 bits
    }
}
