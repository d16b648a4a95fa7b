import Foundation
import StageboxClient
import StageboxTestSupport
import Testing

extension BusTests {
    @Suite struct ClientLifecycleTests {
        /// Descriptors of the kinds the bus uses (memfds, eventfds, sockets): other tests of this
        /// process open and close pipes and files at the same time.
        private func openDescriptors() -> Int {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return fds.filter { fd in
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? ""
                return target.hasPrefix("/memfd:") || target.contains("eventfd") || target.hasPrefix("socket:")
            }.count
        }

        @Test func connectingAndLeavingAThousandTimesLeaksNothing() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            // Warm up once so lazily created things exist before counting.
            do {
                let c = try bus.client("warm")
                _ = try c.addSender(name: "p", channels: 2)
                c.close()
            }
            #expect(eventually { bus.server.clients.isEmpty })
            bus.engine.collect()
            let fdsBefore = openDescriptors()
            // The machine's own noise first: late wakeups over a quiet second and a half, with
            // whatever else runs beside this test (other suites' boards are real-time too).
            let quietStart = bus.control.statistics.lateWakeups.load(ordering: .relaxed)
            usleep(1_500_000)
            let xrunsBefore = bus.control.statistics.lateWakeups.load(ordering: .relaxed)
            let quietLate = xrunsBefore - quietStart
            let watch = StallWatch()
            for i in 0..<1000 {
                let c = try bus.client("cycle\(i % 7)")
                let port = try c.addReceiver(name: "in", channels: 2)
                if i % 100 == 0 { try c.connect(from: "codec.in", to: port.name) }
                c.close()
            }
            #expect(eventually { bus.server.clients.isEmpty })
            // Removed ports are released once the audio thread has let go of them. The count is
            // the process's: other suites running beside this one (boards, clients) hold
            // descriptors for a while too, so it may take longer than the release itself.
            #expect(eventually(30) {
                bus.engine.collect()
                return openDescriptors() <= fdsBefore
            }, "descriptors before \(fdsBefore), after \(openDescriptors())")
            #expect(bus.engine.ports.count == 3, "every client port is gone")
            #expect(bus.engine.connections.isEmpty)
            let lateWakeups = bus.control.statistics.lateWakeups.load(ordering: .relaxed) - xrunsBefore
            let stalls = watch.finish()
            print(StallWatch.report(stalls, "1000 connects"))
            print("1000 connect/disconnect cycles: descriptors \(fdsBefore) → \(openDescriptors()), late wakeups \(lateWakeups) "
                  + "(\(quietLate) in a quiet 1.5 s before), "
                  + "SCHED_FIFO \(bus.outcome.granted)")
            // Clients coming and going must not disturb a real-time audio thread. The build machine is a
            // shared virtual machine whose host can steal the CPU now and then: a stray late wakeup is
            // tolerated, and none is judged while the machine stalls (`StallWatch`); a disturbance
            // caused by the clients would show as many, beyond the noise of a quiet moment just before.
            if bus.outcome.granted && stalls.isEmpty {
                #expect(lateWakeups <= 2 + 2 * quietLate, "late wakeups: \(lateWakeups), \(quietLate) in a quiet 1.5 s")
            }
        }

        @Test func limitsAreRefusedClearly() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let c = try bus.client("greedy")
            var ports: [SenderPort] = []
            for i in 0..<4 { ports.append(try c.addSender(name: "p\(i)", channels: 1)) }
            #expect(throws: BusClientError.refused(.limit, "greedy has its maximum of 4 ports")) {
                _ = try c.addSender(name: "p4", channels: 1)
            }
            #expect(throws: BusClientError.self) { _ = try bus.client("greedy") } // the name is taken
            // The server must have seen the refused client go before counting: its connection
            // counts against the limit until then, named or not.
            #expect(eventually { bus.server.connections == 1 }, "\(bus.server.connections) connections")
            var clients: [BusClient] = []
            for i in 0..<7 { clients.append(try bus.client("c\(i)")) }
            #expect(throws: BusClientError.self) { _ = try bus.client("one-too-many") }
            _ = ports
        }
    }
}
