import Synchronization

/// Hands immutable objects (graph snapshots) from a control thread to the audio thread
/// without a lock, and hands retired ones back so they are freed off the audio thread.
///
/// The control thread calls `publish`; the audio thread calls `acquire` between periods.
/// The exchange keeps a strong reference to every object the audio thread may still use,
/// so no release — and no deallocation — ever happens on the audio thread.
/// A snapshot may name a successor: the audio thread runs it for one period and then moves on
/// to the successor by itself (a graph change runs one period of fades, then the steady graph).
public protocol ChainedSnapshot: AnyObject {
    var successor: Self? { get }
}

public final class SnapshotExchange<Snapshot: ChainedSnapshot>: @unchecked Sendable {
    /// The object waiting to be picked up, as an unretained pointer (0 = none).
    private let pending = Atomic<UInt>(0)
    /// Objects the audio thread has let go of, to be released by the control side.
    private let retired: SPSCQueue<UInt>
    /// Everything published and not yet known to be retired. Control side only.
    private var alive: [UInt: Snapshot] = [:]
    /// The object the audio thread runs now. Audio thread only.
    private var current: UInt = 0
    /// The steady end of the last snapshot published, and what a still waiting one was built
    /// from. Control side only; steady snapshots only, so nothing a change removed stays alive.
    private var lastSteady: Snapshot
    private var waitingBase: Snapshot?

    public init(initial: Snapshot, retireCapacity: Int = 64) {
        retired = SPSCQueue(capacity: retireCapacity)
        let bits = Self.bits(initial)
        alive[bits] = initial
        current = bits
        lastSteady = initial
    }

    private static func bits(_ object: Snapshot) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
    }

    /// Control side: makes `snapshot` the next one the audio thread picks up.
    /// Not for concurrent use: one control thread (or callers serialised by the owner).
    public func publish(_ snapshot: Snapshot) {
        publish { _ in snapshot }
    }

    /// Control side: publishes the snapshot `make` builds from the steady snapshot the audio
    /// thread will be playing when it picks the new one up — so that a change always starts from
    /// what is really playing, even when earlier published snapshots were never picked up.
    ///
    /// That base is known without asking the audio thread: if the last published snapshot is
    /// still waiting, the audio thread still plays what that one was built from; if it was picked
    /// up, it plays (or, after this period's transition, will play) its steady end.
    public func publish(_ make: (Snapshot) -> Snapshot) {
        collect()
        while true {
            let waiting = pending.load(ordering: .acquiring)
            let base = waiting != 0 ? waitingBase! : lastSteady
            let snapshot = make(base)
            var link: Snapshot? = snapshot
            while let s = link { alive[Self.bits(s)] = s; link = s.successor }
            let (swapped, _) = pending.compareExchange(expected: waiting, desired: Self.bits(snapshot),
                                                       ordering: .acquiringAndReleasing)
            if swapped {
                if waiting != 0 { drop(waiting) } // never seen by the audio thread
                lastSteady = Self.steady(snapshot)
                waitingBase = base
                return
            }
            // The audio thread took `waiting` meanwhile (it only ever takes): start again from it.
            drop(Self.bits(snapshot))
        }
    }

    private static func steady(_ snapshot: Snapshot) -> Snapshot {
        var s = snapshot
        while let next = s.successor { s = next }
        return s
    }

    /// Releases a snapshot the audio thread never saw, and its chain.
    private func drop(_ bits: UInt) {
        var dropped = alive[bits]
        while let s = dropped {
            alive[Self.bits(s)] = nil
            dropped = s.successor
        }
    }

    /// Control side: releases what the audio thread has retired.
    public func collect() {
        while let bits = retired.pop() { alive[bits] = nil }
        // Once picked up, what the waiting snapshot was built from is history.
        if pending.load(ordering: .acquiring) == 0 { waitingBase = nil }
    }

    /// Audio side: the snapshot to run this period, switching to a newly published one.
    /// Never allocates, never blocks.
    public func acquire() -> Unmanaged<Snapshot> {
        let next = pending.exchange(0, ordering: .acquiringAndReleasing)
        if next != 0 {
            // If the retire queue is full the old object simply stays alive: a bounded leak
            // the control side can never observe, preferred over blocking here.
            retired.push(current)
            current = next
        }
        return Unmanaged<Snapshot>.fromOpaque(UnsafeRawPointer(bitPattern: current)!)
    }

    /// Audio side: after running a snapshot for one period, moves on to its successor, if any.
    public func advance() {
        let object = Unmanaged<Snapshot>.fromOpaque(UnsafeRawPointer(bitPattern: current)!)
        guard let next = object._withUnsafeGuaranteedRef({ $0.successor }) else { return }
        retired.push(current)
        current = Self.bits(next)
    }

    /// Control side: how many objects are kept alive (for tests and diagnostics).
    public var aliveCount: Int { alive.count }
}
