import Foundation
import StageboxSystem
import StageboxWatchdog
import Testing

/// The feeder against real files and a real datagram socket: a regular file opened as the
/// watchdog shows every byte the feeder wrote ("1" a feed, "V" the magic close).
@Suite struct WatchdogFeederTests {
    private let second: Int64 = 1_000_000_000

    private func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "stagebox-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    private func contents(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<unreadable>"
    }

    /// `body` with an empty regular file for a watchdog, removed after.
    private func withDogFile(_ body: (String) throws -> Void) throws {
        let path = temporaryPath("dog")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        defer { unlink(path) }
        try body(path)
    }

    @Test func feedsOnlyWhileHealthyAndDisarmsOnStop() throws {
        try withDogFile { path in
            let dog = try Watchdog(path: path)
            #expect(dog.setTimeout(seconds: 10) == nil) // a regular file has no timeout to set
            let feeder = WatchdogFeeder(hardware: dog, timeoutSeconds: 10, systemd: nil)
            #expect(feeder.isActive)
            #expect(feeder.describe(now: 0)?.hasSuffix("not fed yet (waiting for the codec)") == true)

            var now = 10 * second
            for _ in 0..<3 { // healthy: one feed a second
                feeder.tick(healthy: true, now: now)
                now += second
            }
            #expect(contents(path) == "111")
            for _ in 0..<5 { // not healthy (a stalled loop): no feed, however often the control thread ticks
                feeder.tick(healthy: false, now: now)
                now += second
            }
            #expect(contents(path) == "111")
            #expect(feeder.describe(now: now)?.contains("STARVING") == true)
            feeder.tick(healthy: true, now: now) // healthy again
            #expect(contents(path) == "1111")
            #expect(feeder.describe(now: now + second / 10) == "\(path), timeout 10 s, fed 0.1 s ago")
            feeder.stop()
            #expect(contents(path) == "1111V")
        }
    }

    @Test func busyTicksFeedEveryHalfInterval() throws {
        try withDogFile { path in
            let feeder = WatchdogFeeder(hardware: try Watchdog(path: path), timeoutSeconds: 2, systemd: nil)
            #expect(feeder.intervalNanos == second / 2) // four times per timeout
            // Ticks every 50 ms for 2 s, healthy each time: a feed every quarter second, no more.
            var now = 5 * second
            for _ in 1...40 {
                feeder.tick(healthy: true, now: now)
                now += second / 20
            }
            #expect(contents(path) == "11111111")
        }
    }

    /// Idle, the control thread ticks an interval after its last tick, whatever woke that one:
    /// a tick woken just short of half an interval after a feed does not feed, and the next
    /// feed is still within an interval and a half.
    @Test func anEarlyTickPutsTheNextFeedWithinAnIntervalAndAHalf() throws {
        try withDogFile { path in
            let feeder = WatchdogFeeder(hardware: try Watchdog(path: path), timeoutSeconds: 10, systemd: nil)
            let interval = feeder.intervalNanos
            #expect(interval == second)
            var fed: [Int64] = []
            var now = 5 * second
            for step in [0, interval / 2 - 1, interval, interval, interval / 2 - 1, interval] {
                now += step
                let before = contents(path).count
                feeder.tick(healthy: true, now: now)
                if contents(path).count > before { fed.append(now) }
            }
            let gaps = zip(fed.dropFirst(), fed).map { $0 - $1 }
            #expect(fed.count == 4)
            #expect(gaps.allSatisfy { $0 < interval * 3 / 2 }, "feeds \(gaps.map { Double($0) / 1e9 }) s apart")
        }
    }

    @Test func nothingToWatchIsInactive() {
        let feeder = WatchdogFeeder(hardware: nil, timeoutSeconds: nil, systemd: nil)
        #expect(!feeder.isActive)
        #expect(feeder.describe() == nil)
        #expect(SystemdNotifier(environment: [:]) == nil)
    }

    @Test func notifiesSystemdOverItsSocket() throws {
        let path = temporaryPath("notify")
        let fd = try UnixSocket.datagram()
        defer { try? fd.close(); unlink(path) }
        try UnixSocketAddress(path: path).bind(fd)

        let systemd = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"]))
        #expect(systemd.watchdogIntervalNanos == 2_000_000_000)
        #expect(systemd.notify("READY=1"))
        let feeder = WatchdogFeeder(hardware: nil, timeoutSeconds: nil, systemd: systemd)
        feeder.tick(healthy: true, now: 10 * second)
        feeder.tick(healthy: false, now: 13 * second) // not healthy: nothing sent
        feeder.stop()

        var received: [String] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = recv(fd.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n <= 0 { break }
            received.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
        #expect(received == ["READY=1", "WATCHDOG=1", "STOPPING=1"])
    }

    @Test func aWatchdogThatIsNotThereIsNamedWithTheReasonInWords() {
        let path = temporaryPath("missing-dog")
        do {
            _ = try Watchdog(path: path)
            Issue.record("a watchdog opened at \(path)")
        } catch {
            #expect(error.description.contains("No such file or directory"))
            #expect(error.description.contains(path))
            #expect(error.description.hasPrefix("opening the watchdog"))
        }
    }

    @Test func aNotifySocketPathTooLongMeansNoNotifier() {
        let path = "/run/" + String(repeating: "x", count: UnixSocketAddress.maximumPathLength)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": path]) == nil)
    }

    @Test func anAbstractNotifySocketIsReached() throws {
        let name = "@stagebox-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try UnixSocket.datagram()
        defer { try? fd.close() }
        try UnixSocketAddress(path: name).bind(fd)
        let systemd = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": name]))
        #expect(systemd.notify("READY=1"))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = recv(fd.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(n > 0 && String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "READY=1")
    }
}
