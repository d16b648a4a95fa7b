import Foundation
import StageboxClient
import StageboxTriggers
import StageboxProtocol
import Synchronization
import Testing

/// The events one client saw.
final class SeenEvents: Sendable {
    private let list = Mutex<[BusEvent]>([])
    func record(_ event: BusEvent) { list.withLock { $0.append(event) } }
    func contains(_ event: BusEvent) -> Bool { list.withLock { $0.contains(event) } }
    var all: [BusEvent] { list.withLock { $0 } }
}

/// How many times a handler ran.
final class Count: Sendable {
    private let n = Atomic<Int>(0)
    func add() { n.add(1, ordering: .relaxed) }
    var value: Int { n.load(ordering: .relaxed) }
}

extension BusTests {
    @Suite struct ClientTriggerTests {
        /// The Audiobus shape: another client (or a button, through the board) fires the trigger,
        /// only its owner is told, the owner sets the new state, and every client hears it.
        @Test func aFiredTriggerReachesItsOwnerAloneAndTheNewStateReachesEveryone() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let owner = try bus.client("call")
            let watcher = try bus.client("watch")
            let ownerSaw = SeenEvents(), watcherSaw = SeenEvents()
            owner.onEvent { ownerSaw.record($0) }
            watcher.onEvent { watcherSaw.record($0) }
            let fires = Count()
            let trigger = try owner.createTrigger(name: "mic-mute", title: "Mute the microphone") { t in
                fires.add()
                try? t.setState(t.state == .selected ? .normal : .selected)
            }
            #expect(trigger.name == "call.mic-mute")
            #expect(bus.triggers.all.contains { $0.name == "call.mic-mute" && $0.title == "Mute the microphone" && $0.state == .normal })
            #expect(eventually { watcherSaw.contains(.triggerAdded(name: "call.mic-mute", title: "Mute the microphone", state: 0)) })

            try watcher.fireTrigger("call.mic-mute")
            #expect(eventually { bus.triggers.state("call.mic-mute") == .selected })
            #expect(eventually { watcherSaw.contains(.triggerChanged(name: "call.mic-mute", state: 1)) })
            #expect(fires.value == 1)
            // The owner's copy changes when its request is answered, just after the board's.
            #expect(eventually { trigger.state == .selected })

            // As a button or the console fires it: the board keeps the state until the owner sets it.
            #expect(bus.triggers.fire("call.mic-mute") == .selected)
            #expect(eventually { bus.triggers.state("call.mic-mute") == .normal })
            #expect(eventually { watcherSaw.contains(.triggerChanged(name: "call.mic-mute", state: 0)) })
            #expect(fires.value == 2)
            #expect(eventually { ownerSaw.all.filter { $0 == .triggerFired("call.mic-mute") }.count == 2 })
            #expect(!watcherSaw.all.contains { if case .triggerFired = $0 { true } else { false } },
                    "only the owner hears its trigger fire")

            // The owner may fire its own trigger too, and remove it.
            try owner.fireTrigger("call.mic-mute")
            #expect(eventually { fires.value == 3 })
            try trigger.remove()
            #expect(bus.triggers.state("call.mic-mute") == nil)
            #expect(eventually { watcherSaw.contains(.triggerRemoved("call.mic-mute")) })
            #expect(throws: BusClientError.refused(.noSuchTrigger, "no trigger named call.mic-mute (triggers: mute)")) {
                try watcher.fireTrigger("call.mic-mute")
            }
        }

        /// A client's triggers leave with it, however it ends; a button mapped to one does
        /// nothing meanwhile, and the client can make it again when it is back.
        @Test func aClientsTriggersLeaveWithIt() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let removed = Mutex<[String]>([])
            bus.triggers.onRemove { name in removed.withLock { $0.append(name) } }
            let watcher = try bus.client("watch")
            let watcherSaw = SeenEvents()
            watcher.onEvent { watcherSaw.record($0) }
            var owner: BusClient? = try bus.client("call")
            let mute = try owner!.createTrigger(name: "mic-mute") { _ in }
            let camera = try owner!.createTrigger(name: "camera", state: .selected) { _ in }
            #expect(bus.triggers.all.map(\.name) == ["call.camera", "call.mic-mute", "mute"])
            #expect(bus.triggers.all.first { $0.name == "call.mic-mute" }?.title == "call.mic-mute", "no title: the name")
            owner?.close()
            owner = nil
            #expect(eventually { bus.triggers.all.map(\.name) == ["mute"] })
            // The board drops a trigger from its table, then tells its listeners: eventually.
            #expect(eventually { removed.withLock { $0.sorted() } == ["call.camera", "call.mic-mute"] })
            #expect(eventually { watcherSaw.contains(.triggerRemoved("call.mic-mute")) && watcherSaw.contains(.triggerRemoved("call.camera")) })
            #expect(bus.triggers.fire("call.mic-mute") == nil, "a button mapped to it is inert")
            _ = (mute, camera)

            let back = try bus.client("call")
            let again = try back.createTrigger(name: "mic-mute") { _ in }
            #expect(bus.triggers.state(again.name) == .normal)
        }

        @Test func badTriggerRequestsAreRefusedNamingWhatIsWrong() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let call = try bus.client("call")
            let other = try bus.client("other")
            let othersTrigger = try other.createTrigger(name: "t") { _ in }
            defer { _ = othersTrigger }
            func raw(_ message: ClientMessage) throws(BusClientError) { _ = try call.connection.request(message) }
            let states = "0 normal, 1 selected, 2 disabled, 3 alternate, 4 error"

            #expect(throws: BusClientError.refused(.badRequest, "trigger state 9 for call.x is out of range (\(states))")) {
                try raw(.createTrigger(name: "x", title: "", state: 9))
            }
            #expect(throws: BusClientError.refused(.badRequest, "invalid trigger name 'call.a.b' (CLIENT.TRIGGER: letters, digits, '_' and '-' on each side of one '.')")) {
                try raw(.createTrigger(name: "a.b", title: "", state: 0))
            }
            #expect(throws: BusClientError.refused(.badRequest, "invalid trigger name 'call.' (CLIENT.TRIGGER: letters, digits, '_' and '-' on each side of one '.')")) {
                try raw(.createTrigger(name: "", title: "", state: 0))
            }
            #expect(throws: BusClientError.refused(.badRequest, "invalid trigger name 'call.sp ace' (CLIENT.TRIGGER: letters, digits, '_' and '-' on each side of one '.')")) {
                _ = try call.createTrigger(name: "sp ace") { _ in }
            }
            let long = String(repeating: "t", count: 65)
            #expect(throws: BusClientError.refused(.badRequest, "invalid title for trigger call.x: '\(long)' (at most 64 bytes, no control characters)")) {
                try raw(.createTrigger(name: "x", title: long, state: 0))
            }
            #expect(throws: BusClientError.refused(.badRequest, "invalid title for trigger call.x: 'two?lines' (at most 64 bytes, no control characters)")) {
                try raw(.createTrigger(name: "x", title: "two\nlines", state: 0))
            }
            #expect(bus.triggers.all.map(\.name) == ["mute", "other.t"], "nothing refused was made")

            try raw(.createTrigger(name: "x", title: "", state: 0))
            #expect(throws: BusClientError.refused(.exists, "trigger call.x already exists")) {
                try raw(.createTrigger(name: "x", title: "", state: 0))
            }
            #expect(throws: BusClientError.refused(.badRequest, "trigger state 5 for call.x is out of range (\(states))")) {
                try raw(.setTriggerState(name: "x", state: 5))
            }
            #expect(throws: BusClientError.refused(.notOwner, "trigger mute belongs to stagebox, not to call")) {
                try call.setTriggerState("mute", .selected)
            }
            #expect(throws: BusClientError.refused(.notOwner, "trigger other.t belongs to other, not to call")) {
                try call.setTriggerState("other.t", .selected)
            }
            #expect(throws: BusClientError.refused(.notOwner, "trigger other.t belongs to other, not to call")) {
                try call.removeTrigger("other.t")
            }
            #expect(throws: BusClientError.refused(.noSuchTrigger, "call has no trigger named call.nope")) {
                try call.removeTrigger("nope")
            }
            #expect(bus.triggers.state("other.t") == .normal && bus.triggers.state("mute") == .normal)

            var made: [ClientTrigger] = []
            for i in 1..<16 { made.append(try call.createTrigger(name: "t\(i)") { _ in }) }
            #expect(throws: BusClientError.refused(.limit, "call has its maximum of 16 triggers")) {
                _ = try call.createTrigger(name: "t16") { _ in }
            }
            #expect(bus.triggers.all.count == 18)
        }

        /// Firing a disabled trigger does nothing, and the answer says so.
        @Test func firingADisabledTriggerSaysSoAndDoesNothing() throws {
            let bus = try BusFixture()
            defer { bus.stop() }
            let owner = try bus.client("call")
            let other = try bus.client("other")
            let fires = Count()
            let trigger = try owner.createTrigger(name: "hand") { _ in fires.add() }
            try trigger.setState(.disabled)
            #expect(bus.triggers.state("call.hand") == .disabled)
            #expect(throws: BusClientError.refused(.triggerDisabled, "trigger call.hand is disabled")) {
                try other.fireTrigger("call.hand")
            }
            #expect(bus.triggers.fireReporting("call.hand") == .disabled)
            usleep(100_000)
            #expect(fires.value == 0, "the owner was not told")
            try trigger.setState(.normal)
            try other.fireTrigger("call.hand")
            #expect(eventually { fires.value == 1 })

            bus.triggers.setState("mute", .disabled)
            #expect(throws: BusClientError.refused(.triggerDisabled, "trigger mute is disabled")) {
                try other.fireTrigger("mute")
            }
            #expect(try bus.engine.isMuted("codec.in") == false, "the built-in trigger's action did not run")
        }
    }
}
