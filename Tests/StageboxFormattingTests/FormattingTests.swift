import Testing
import StageboxFormatting

@Suite struct FormattingTests {
    @Test func formatsFixedPoint() {
        #expect(fixed(1.25, digits: 1) == "1.3" || fixed(1.25, digits: 1) == "1.2")
        #expect(fixed(-0.05, digits: 2) == "-0.05")
        #expect(fixed(3, digits: 0) == "3")
        #expect(fixed(12.3456, digits: 3) == "12.346")
        #expect(fixed(-0.0001, digits: 2) == "0.00")
        #expect(fixed(.nan, digits: 1) == "nan")
        #expect(fixed(-.infinity, digits: 1) == "-inf")
    }

    @Test func padsColumnsWithoutShortening() {
        #expect("ab".padded(4) == "ab  ")
        #expect("abcdef".padded(4) == "abcdef")
        #expect("7".leftPadded(3) == "  7")
        #expect("42".leftPadded(5, with: "0") == "00042")
        #expect("a b  ".trailingSpacesRemoved == "a b")
    }
}
