import Synchronization

/// The slate of the next take, as a production sound person keeps it: project, scene, take
/// number, tape (the day's roll) and a note. Each take carries it in its iXML chunk and `bext`
/// description; a take's start uses the take number and moves it on; a new scene starts again
/// at take 1. Set from the console (`scene 12A`, `take next`, `note …`) and `[recorder]`.
public final class Slate: Sendable {
    public struct Fields: Sendable, Equatable {
        public var project: String
        public var scene: String
        /// The number the next take gets.
        public var take: Int
        public var tape: String
        /// For the next take only: a take's start clears it.
        public var note: String

        public init(project: String = "", scene: String = "", take: Int = 1, tape: String = "", note: String = "") {
            self.project = project
            self.scene = scene
            self.take = take
            self.tape = tape
            self.note = note
        }
    }

    private let fields: Mutex<Fields>

    public init(_ fields: Fields = Fields()) { self.fields = Mutex(fields) }

    public var current: Fields { fields.withLock { $0 } }

    /// A new scene: its takes count from 1 again.
    public func setScene(_ scene: String) {
        fields.withLock {
            $0.scene = scene
            $0.take = 1
        }
    }

    public func setTake(_ take: Int) { fields.withLock { $0.take = max(1, take) } }
    public func setNote(_ note: String) { fields.withLock { $0.note = note } }
    public func setProject(_ project: String) { fields.withLock { $0.project = project } }
    public func setTape(_ tape: String) { fields.withLock { $0.tape = tape } }

    /// At a take's start: the fields it carries; the take number moves on and the note is used up.
    func takeStarts() -> Fields {
        fields.withLock { f in
            let used = f
            f.take = min(f.take + 1, 9999) // a slate's numbers stop at 9999: the last repeats
            f.note = ""
            return used
        }
    }

    /// One line for the console: "scene 12A, take 3 next, tape D1, note: …".
    public var line: String {
        let f = current
        var parts = [f.scene.isEmpty ? "no scene" : "scene \(f.scene)", "take \(f.take) next"]
        if !f.project.isEmpty { parts.insert("project \(f.project)", at: 0) }
        if !f.tape.isEmpty { parts.append("tape \(f.tape)") }
        parts.append(f.note.isEmpty ? "no note" : "note: \(f.note)")
        return parts.joined(separator: ", ")
    }
}
