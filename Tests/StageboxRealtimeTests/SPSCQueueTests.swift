import Testing
import StageboxRealtime

@Suite struct SPSCQueueTests {
    @Test func keepsOrderAndRefusesWhenFull() {
        let q = SPSCQueue<Int>(capacity: 3)
        #expect(q.push(1) && q.push(2) && q.push(3))
        #expect(!q.push(4))
        #expect(q.count == 3)
        #expect(q.pop() == 1)
        #expect(q.push(4))
        #expect([q.pop(), q.pop(), q.pop(), q.pop()] == [2, 3, 4, nil])
    }

    @Test func movesEveryElementAcrossThreads() async {
        let q = SPSCQueue<Int>(capacity: 64)
        let n = 200_000
        let producer = Task.detached {
            var i = 0
            while i < n { if q.push(i) { i += 1 } else { await Task.yield() } }
        }
        var expected = 0
        while expected < n {
            if let v = q.pop() {
                #expect(v == expected)
                if v != expected { break }
                expected += 1
            } else {
                await Task.yield()
            }
        }
        await producer.value
        #expect(expected == n)
    }
}
