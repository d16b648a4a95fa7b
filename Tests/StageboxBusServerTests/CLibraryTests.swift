import Synchronization
import Foundation
import StageboxClient
import StageboxTestSupport
import Testing

extension BusTests {
    @Suite struct CLibraryTests {
        @Test func aCSenderReachesASwiftReceiverBitExact() throws {
            let program = try CExamples.build("send_sequence")
            defer { try? FileManager.default.removeItem(atPath: program) }
            let bus = try BusFixture()
            defer { bus.stop() }
            let client = try bus.client("swiftrec")
            let port = try client.addReceiver(name: "in", channels: 2, format: .int16)
            let frames = 24000
            let result = Atomic2()
            let portName = port.name
            let sender = Thread { result.value = try? CExamples.run(program, [bus.socketPath, portName, "\(frames)"]) }
            sender.start()
            let received = receiveStream(port) { result.value != nil }
            #expect(eventually(30) { result.value != nil })
            #expect(result.value?.status == 0, "\(result.value?.output ?? "")")
            var x: UInt32 = 99
            let expected: [Int16] = (0..<(frames * 2)).map { _ in x = x &* 1_664_525 &+ 1_013_904_223; return Int16(truncatingIfNeeded: x >> 16) }
            judgeBitExact(received: received, sent: expected, port: port, what: "C sender → Swift receiver")
        }

        @Test func theVonageAndAgoraShapesWorkFromC() throws {
            let program = try CExamples.build("vonage_agora")
            defer { try? FileManager.default.removeItem(atPath: program) }
            let bus = try BusFixture()
            defer { bus.stop() }
            let r = try CExamples.run(program, [bus.socketPath, "2"])
            #expect(r.status == 0, "\(r.output)")
            #expect(r.output.contains("pull ok"))
            #expect(bus.engine.ports.count == 3, "the C client's ports left with it")
        }

        /// The C example: a video-call app's mic mute as a trigger, toggled on each fire.
        @Test func theMicMuteExampleTogglesItsTriggerOnEachFire() throws {
            let program = try CExamples.build("mic_mute_toggle")
            defer { try? FileManager.default.removeItem(atPath: program) }
            let bus = try BusFixture()
            defer { bus.stop() }
            let result = Atomic2()
            let socket = bus.socketPath
            let app = Thread { result.value = try? CExamples.run(program, [socket, "call", "3"]) }
            app.start()
            #expect(eventually(30) { bus.triggers.state("call.mic-mute") != nil })
            #expect(bus.triggers.all.first { $0.name == "call.mic-mute" }?.title == "Mute the microphone")
            let button = try bus.client("button")
            try button.fireTrigger("call.mic-mute")
            #expect(eventually { bus.triggers.state("call.mic-mute") == .selected })
            try button.fireTrigger("call.mic-mute")
            #expect(eventually { bus.triggers.state("call.mic-mute") == .normal })
            try button.fireTrigger("call.mic-mute")
            #expect(eventually(30) { result.value != nil }, "the example ends after three fires")
            let r = try #require(result.value)
            #expect(r.status == 0, "\(r.output)")
            #expect(r.output == """
                ready: call.mic-mute
                fired call.mic-mute: microphone muted
                fired call.mic-mute: microphone unmuted
                fired call.mic-mute: microphone muted

                """, "\(r.output)")
            #expect(eventually { bus.triggers.state("call.mic-mute") == nil }, "the trigger left with the app")
        }
    }
}

/// The C program's result, written by the thread that ran it.
final class Atomic2: Sendable {
    private let slot = Mutex<(status: Int32, output: String)?>(nil)
    var value: (status: Int32, output: String)? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}
