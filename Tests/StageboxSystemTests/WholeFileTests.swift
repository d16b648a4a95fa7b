import StageboxSystem
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct WholeFileTests {
    private func scratchDirectory() -> String {
        var template = Array("/tmp/stagebox-wholefile-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    @Test func aWriteReplacesTheFileWholeAndLeavesNoTemporary() throws {
        let dir = scratchDirectory()
        let path = dir + "/note"
        try WholeFile.write("first\n", to: path)
        try WholeFile.write("second\n", to: path)
        #expect(try WholeFile.read(path) == "second\n")
        #expect(access(path + ".new", F_OK) != 0, "the temporary is renamed, not left beside it")
    }

    @Test func aWriteThatCannotBeMadeNamesTheFileAndKeepsTheOldOne() throws {
        let dir = scratchDirectory()
        let path = dir + "/note"
        try WholeFile.write("kept\n", to: path)
        // A directory where the temporary would go: creating it fails, the old file stays.
        #expect(mkdir(path + ".new", 0o755) == 0)
        do {
            try WholeFile.write("lost\n", to: path)
            Issue.record("the write succeeded over a directory")
        } catch {
            #expect(error.description.contains(path + ".new"), "\(error)")
        }
        #expect(try WholeFile.read(path) == "kept\n")
    }

    @Test func readingRefusesTooLargeAndNonUTF8FilesNamingThem() throws {
        let dir = scratchDirectory()
        let big = dir + "/big"
        try WholeFile.write(String(repeating: "x", count: 5000), to: big)
        #expect(throws: SystemCallError("reading", big, errno: .fileTooLarge)) { try WholeFile.read(big, limit: 4096) }
        let binary = dir + "/binary"
        let fd = open(binary, O_WRONLY | O_CREAT, 0o644)
        var bytes: [UInt8] = [0xff, 0xfe, 0x00]
        _ = write(fd, &bytes, bytes.count)
        close(fd)
        #expect(throws: SystemCallError("reading", binary, errno: .illegalByteSequence)) { try WholeFile.read(binary) }
        #expect(throws: SystemCallError("opening", dir + "/missing", errno: .noSuchFileOrDirectory)) {
            try WholeFile.read(dir + "/missing")
        }
    }
}
