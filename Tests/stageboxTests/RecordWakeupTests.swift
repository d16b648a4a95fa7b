import Foundation
import StageboxTestSupport
import Testing

/// `stagebox record` takes 20 ms at a time and asks the bus to wake it only once they are
/// there: at a 64-frame period it sleeps through most periods instead of waking for each.
@Suite struct RecordWakeupTests {
    /// Context switches of all of a process's threads so far: its waits that slept, and the
    /// times it was preempted.
    private func switches(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return sum + status.split(separator: "\n").reduce(0) { count, line in
                let parts = line.split(separator: ":")
                guard parts.count == 2, parts[0].hasSuffix("ctxt_switches") else { return count }
                return count + (Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0)
            }
        }
    }

    @Test func aRecordClientSleepsThroughMostPeriodsAndKeepsEveryFrame() throws {
        let board = try SimulatedBoard() // its default period, 64 frames
        defer { _ = board.stop() }
        let record = try board.start(["record", board.scratch.path("take.wav"), "--port", "rec.in", "--from", "codec.in",
                                      "--seconds", "4", "--encoding", "PCM_16"])
        #expect(waitFor(10) { (try? board.stagebox(["ports"]).stdout.contains("rec.in")) == true })
        usleep(500_000) // past the start cushion
        let before = switches(record.processIdentifier), start = Date()
        usleep(1_500_000)
        let woken = switches(record.processIdentifier) - before
        let periods = Date().timeIntervalSince(start) * 48000 / 64
        print("a record client at 64 frames: \(woken) context switches in \(Int(periods)) periods")
        // Woken every period it would switch at least once a period; a busy machine only
        // makes it fewer (more frames wait at each wakeup).
        #expect(Double(woken) < periods / 4, "\(woken) context switches in \(Int(periods)) periods")
        record.waitUntilExit()
        let (out, err) = output(of: record)
        #expect(record.terminationStatus == 0, "\(err)")
        #expect(out.contains("recorded 192000 frames"), "\(out)")
    }
}
