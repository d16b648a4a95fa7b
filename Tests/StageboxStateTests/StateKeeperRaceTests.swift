import Foundation
import Logging
import StageboxEngine
import StageboxState
import Synchronization
import Testing

/// The writer thread and the console writing at once.
@Suite struct StateKeeperRaceTests {
    /// `state save` at the console while the writer thread writes the changes it hears: the two
    /// must not write the temporary file at once (a torn document, or a rename that finds it gone),
    /// and the file must end with the newest state, not an older one written last.
    @Test func consoleSavesDuringChangesLeaveTheNewestCompleteDocument() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2))
        let keeper = StateKeeper(file: StateFile(path: directory + "/state.toml"), engine: engine, configured: [],
                                 writeDelayNanos: 0, logger: Logger(label: "test"))
        _ = keeper.start(restore: true, now: 0)

        let stop = Atomic<Bool>(false)
        let changer = Thread {
            var muted = false
            while !stop.load(ordering: .relaxed) {
                muted.toggle()
                try? engine.setMuted("codec.in", muted)
                usleep(200)
            }
        }
        changer.start()
        var refused: [String] = []
        for _ in 0..<400 {
            let answer = keeper.saveNow()
            if !answer.hasPrefix("state written") && refused.count < 3 { refused.append(answer) }
            if case .corrupt(let problem, _) = StateFile(path: directory + "/state.toml").load(now: 0) {
                refused.append("torn: \(problem)")
                break
            }
        }
        stop.store(true, ordering: .relaxed)
        while !changer.isFinished { usleep(1000) }
        // The last change is written by the writer thread (or by stop).
        keeper.stop()
        let problems = refused.joined(separator: "; ")
        #expect(problems.isEmpty)
        let expected = SavedState(muted: (try engine.isMuted("codec.in")) ? ["codec.in"] : [])
        #expect(StateFile(path: directory + "/state.toml").load(now: 0) == .loaded(expected))
    }

    /// `state clear` while a change is being written: the file ends empty, whatever the writer
    /// thread had in hand.
    @Test func clearWhileTheWriterWritesLeavesTheEmptyState() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = Engine(settings: EngineSettings(sampleRate: 48000, period: 64, inputs: 2, outputs: 2))
        let path = directory + "/state.toml"
        let keeper = StateKeeper(file: StateFile(path: path), engine: engine, configured: [],
                                 writeDelayNanos: 0, logger: Logger(label: "test"))
        _ = keeper.start(restore: true, now: 0)
        for round in 0..<200 {
            try engine.setMuted("codec.in", round % 2 == 0) // the writer wakes for it at once
            _ = keeper.clear()
            usleep(UInt32.random(in: 0...300))
            let loaded = StateFile(path: path).load(now: 0)
            #expect(loaded == .loaded(SavedState()), "round \(round): \(loaded)")
            if loaded != .loaded(SavedState()) { break }
        }
        keeper.stop()
    }
}
