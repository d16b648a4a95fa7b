import StageboxUpdate
import Testing

/// Versions as tools/image/build writes them order as a person reads them.
@Suite struct SystemVersionTests {
    @Test func numbersCompareAsNumbersAndBuildsInOrder() {
        #expect(SystemVersion("0.1.0-20261126.073000") < SystemVersion("0.1.0-20261127.080000"))
        #expect(SystemVersion("0.1.0-20261127.080000") < SystemVersion("0.2.0"))
        #expect(SystemVersion("0.9.0") < SystemVersion("0.10.0"))
        #expect(SystemVersion("1.2") < SystemVersion("1.2.1"))
        #expect(SystemVersion("1.02.0") == SystemVersion("1.2.0"))
        #expect(!(SystemVersion("2.0.0") < SystemVersion("2.0.0")))
        #expect(SystemVersion("1.0.0-rc1") < SystemVersion("1.0.0-rc2"))
    }
}
