import StageboxRecorder
import Testing

@Suite struct RecordTimeLeftTests {
    @Test func timeLeftIsTheFreeSpaceAboveTheReserveAtTheTakesRate() throws {
        // 24-bit stereo at 48 kHz: 288 000 bytes a second.
        let left = try #require(RecordTimeLeft(freeBytes: 1_000_000_000, reserveBytes: 64_000_000, bytesPerSecond: 288_000))
        #expect(left.seconds == 936_000_000 / 288_000.0)
        #expect(left.text == "54 min")
        #expect(!left.isLow)
    }

    @Test func belowTheReserveNoTimeIsLeftAndNothingRecordedTellsNoTime() throws {
        #expect(RecordTimeLeft(freeBytes: 10_000_000, reserveBytes: 64_000_000, bytesPerSecond: 96_000)?.seconds == 0)
        #expect(RecordTimeLeft(freeBytes: 10_000_000, reserveBytes: 0, bytesPerSecond: 0) == nil)
    }

    @Test func theTextShowsHoursAndMinutesThenSecondsOnceTheyCount() {
        #expect(RecordTimeLeft(seconds: 63 * 3600 + 10 * 60 + 59).text == "63 h 10 min")
        #expect(RecordTimeLeft(seconds: 3600).text == "1 h 0 min")
        #expect(RecordTimeLeft(seconds: 47 * 60 + 30).text == "47 min")
        #expect(RecordTimeLeft(seconds: 10 * 60).text == "10 min")
        #expect(RecordTimeLeft(seconds: 9 * 60 + 58.9).text == "9 min 58 s")
        #expect(RecordTimeLeft(seconds: 40.5).text == "40 s")
        #expect(RecordTimeLeft(seconds: 0).text == "0 s")
    }

    @Test func theWarningStartsBelowTenMinutes() {
        #expect(!RecordTimeLeft(seconds: 600).isLow)
        #expect(RecordTimeLeft(seconds: 599.9).isLow)
    }

    @Test func aMediumIsAskedOfTheKernel() throws {
        let medium = try #require(Medium(path: "/tmp"))
        #expect(medium.sizeBytes > 0 && medium.freeBytes <= medium.sizeBytes)
        #expect(!medium.filesystem.isEmpty)
        #expect(Medium(path: "/nonexistent-stagebox-medium") == nil)
    }
}
