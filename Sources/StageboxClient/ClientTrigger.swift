import StageboxPortRules
import Synchronization
import StageboxTriggers

/// One of the program's own triggers on the bus, `client.trigger` (Audiobus's custom trigger):
/// buttons, the console, other clients and the command line fire it, and the program is told.
///
/// Firing does not change the trigger's state: the program decides and sets it (`setState`),
/// and every client hears the change. The trigger leaves the bus with `remove()`, when the
/// object is released, or when the program leaves the bus (however it ends).
public final class ClientTrigger: Sendable {
    /// The trigger's bus name, `client.trigger`.
    public let name: String
    private let clientReference: WeakClient
    private var client: BusClient? { clientReference.client }
    private let current: Atomic<UInt8>
    private let removed = Atomic<Bool>(false)

    init(client: BusClient, name: String, state: TriggerState) {
        clientReference = WeakClient(client: client)
        self.name = name
        current = Atomic(state.rawValue)
    }

    deinit { if !removed.load(ordering: .relaxed) { try? client?.removeTrigger(name) } }

    /// The state this program last gave the trigger.
    public var state: TriggerState { TriggerState(rawValue: current.load(ordering: .relaxed)) ?? .normal }

    /// Sets the trigger's state on the bus (what buttons' LEDs and other clients show).
    /// `.disabled` makes firing it do nothing until another state is set.
    public func setState(_ state: TriggerState) throws(BusClientError) {
        guard let client else { throw .connection("the client of trigger \(name) has been released") }
        try client.setTriggerState(name, state)
        current.store(state.rawValue, ordering: .relaxed)
    }

    /// Takes the trigger off the bus; its handler is not called again.
    public func remove() throws(BusClientError) {
        guard !removed.exchange(true, ordering: .relaxed) else { return }
        try client?.removeTrigger(name)
    }
}

/// The trigger's weak reference to its client, in a `let` of a Sendable class. (`weak let`
/// needs Swift 6.2; the aarch64 cross compiler is 6.0.3.)
private struct WeakClient: Sendable {
    weak var client: BusClient?
}
