@testable import StageboxMedia
import StageboxSystem
import Testing

@Suite struct StickFilesystemTests {
    private func blkid(_ status: Int32, _ lines: [String]) -> Result<StickFilesystem, StickRefusal> {
        StickFilesystem.parse(ChildProcess.Outcome(status: status, lines: lines), device: "/dev/sda1")
    }

    @Test func blkidsAnswerGivesTheKindAndTheLabel() {
        #expect(blkid(0, ["DEVNAME=/dev/sda1", "LABEL=TAKES", "UUID=1A2B-3C4D", "VERSION=FAT32", "TYPE=vfat", "USAGE=filesystem"])
            == .success(StickFilesystem(type: "vfat", label: "TAKES")))
        #expect(blkid(0, ["TYPE=exfat", "LABEL="]) == .success(StickFilesystem(type: "exfat", label: nil)))
        #expect((try? blkid(0, ["TYPE=ext4"]).get())?.kernelType == "ext4")
        #expect((try? blkid(0, ["TYPE=ext2"]).get())?.kernelType == "ext4")
    }

    @Test func whatCannotBeMountedIsRefusedWithWhatItHolds() {
        guard case .failure(let ntfs) = blkid(0, ["TYPE=ntfs"]) else { Issue.record("ntfs accepted"); return }
        #expect(ntfs.reason == "/dev/sda1 holds ntfs: sticks can be FAT32, exFAT or ext4")
        guard case .failure(let blank) = blkid(2, []) else { Issue.record("a blank stick accepted"); return }
        #expect(blank.reason.contains("holds no filesystem"))
        guard case .failure(let failed) = blkid(4, ["blkid: error: /dev/sda1: No such file or directory"]) else {
            Issue.record("a failed blkid accepted"); return
        }
        #expect(failed.reason.contains("status 4") && failed.reason.contains("No such file"))
    }
}
