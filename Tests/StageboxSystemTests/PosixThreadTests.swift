import StageboxSystem
import Synchronization
import Testing

@Suite struct PosixThreadTests {
    @Test func aThreadRuns() throws {
        let ran = Atomic<Bool>(false)
        let thread = try PosixThread.start(named: "a test") { ran.store(true, ordering: .relaxed) }.get()
        thread.join()
        let didRun = ran.load(ordering: .relaxed)
        #expect(didRun)
    }

    /// No system gives a thread a stack of an exabyte: the start fails, and says which thread.
    @Test func aThreadThatCannotStartIsAnErrorNamingIt() {
        let ran = Atomic<Bool>(false)
        switch PosixThread.start(named: "the impossible stack", stackSize: 1 << 60, { ran.store(true, ordering: .relaxed) }) {
        case .success(let thread):
            thread.join()
            Issue.record("a thread with a 1 EiB stack started")
        case .failure(let error):
            #expect(error.description.hasPrefix("starting the thread for the impossible stack: "))
            #expect(error.description.hasSuffix(error.errno.description))
            let didRun = ran.load(ordering: .relaxed)
            #expect(!didRun)
        }
    }
}
