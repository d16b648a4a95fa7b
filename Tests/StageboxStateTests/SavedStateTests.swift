import StageboxEngine
import StageboxState
import Testing

@Suite struct SavedStateTests {
    @Test func aDocumentReadsBackAsWritten() throws {
        let state = SavedState(connections: [Connection(from: "call.out", to: "codec.out")],
                               removed: [Connection(from: "codec.in", to: "codec.out")], muted: ["codec.in", "call.out"])
        #expect(try SavedState.parse(state.text) == state)
        #expect(try SavedState.parse(SavedState().text).isEmpty)
    }

    @Test func channelConnectionsKeepTheirChannels() throws {
        let text = "version = 1\nconnections = [\"codec.in:2 -> call.in:1\"]\ncomplete = true\n"
        let c = try #require(try SavedState.parse(text).connections.first)
        #expect(c.from == "codec.in" && c.fromChannel == 2 && c.to == "call.in" && c.toChannel == 1)
    }

    /// Each problem names where it is: the TOML line, or the key and entry.
    @Test(arguments: [
        ("version = 1\nconnections = [\"a.out -> \n", "line"),
        ("connections = []\n", "no version"),
        ("version = 2\n", "version 2, and this stagebox reads version 1"),
        ("version = 1\nmuted = [1, 2]\n", "muted must be an array of strings"),
        ("version = 1\nconnections = [\"a.out to b.in\"]\n", "connections[1]: 'a.out to b.in' is not written FROM -> TO"),
        ("version = 1\nremoved = [\"a.out -> b in\"]\n", "removed[1]"),
        ("version = 1\ncolour = 3\n", "unknown key colour"),
        ("version = 1\nmuted = []\n", "cut short"),
    ])
    func problemsAreNamed(text: String, expected: String) {
        do {
            _ = try SavedState.parse(text)
            Issue.record("parsed: \(text)")
        } catch {
            #expect(error.description.contains(expected), "\(error)")
        }
    }
}
