import StageboxTriggers
import Synchronization
import Testing

@Suite struct TriggerBoardTests {
    /// A mute trigger whose action mutes a port, and the port's mute announced back to the
    /// trigger with `setState` (as `stagebox run` wires them): one fire, one change heard.
    @Test func aFireWhoseActionSetsTheStateIsHeardOnce() {
        let board = TriggerBoard()
        let heard = Mutex<[TriggerState]>([])
        board.add(name: "mute", title: "") {
            board.setState("mute", .selected) // the port's mute, announced back during the action
            return .selected
        }
        board.onChange { _, state in heard.withLock { $0.append(state) } }
        #expect(board.fire("mute") == .selected)
        #expect(heard.withLock { $0 } == [.selected])
    }

    /// A fire that leaves the state as it was is still heard (a built-in trigger's every fire).
    @Test func everyFireIsHeard() {
        let board = TriggerBoard()
        let heard = Mutex(0)
        board.add(name: "marker", title: "") { .normal }
        board.onChange { _, _ in heard.withLock { $0 += 1 } }
        board.fire("marker")
        board.fire("marker")
        #expect(heard.withLock { $0 } == 2)
    }
}
