import StageboxSystem
import Synchronization

/// A bounded, lock-free single-producer single-consumer queue.
///
/// This is how the audio thread talks to everything else: one side pushes, the other pops,
/// neither ever blocks or allocates after `init`. Elements should be trivial values
/// (numbers, small structs, `Unmanaged` references) so that a push copies bytes only.
public final class SPSCQueue<Element>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element>
    private let capacity: Int
    /// Next slot to read; written by the consumer only.
    private let head = Atomic<Int>(0)
    /// Next slot to write; written by the producer only.
    private let tail = Atomic<Int>(0)

    /// - Parameter capacity: how many elements can wait at once.
    public init(capacity: Int) {
        precondition(capacity > 0, "an SPSC queue needs room for at least one element")
        // One slot stays empty to tell full from empty.
        self.capacity = capacity + 1
        storage = .allocate(capacity: capacity + 1)
        Prefault.touch(storage, count: capacity + 1)
    }

    deinit {
        while pop() != nil {}
        storage.deallocate()
    }

    /// Pushes an element; returns false (and drops nothing) when the queue is full.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let next = t + 1 == capacity ? 0 : t + 1
        if next == head.load(ordering: .acquiring) { return false }
        (storage + t).initialize(to: element)
        tail.store(next, ordering: .releasing)
        return true
    }

    /// Pops the oldest element, or nil when the queue is empty.
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        let element = (storage + h).move()
        head.store(h + 1 == capacity ? 0 : h + 1, ordering: .releasing)
        return element
    }

    /// How many elements wait now (a snapshot; exact only on the consumer side).
    public var count: Int {
        let h = head.load(ordering: .acquiring)
        let t = tail.load(ordering: .acquiring)
        return t >= h ? t - h : t + capacity - h
    }
}
