@testable import StageboxDiagnostics
import StageboxTestSupport
import StageboxSystem
import Testing

@Suite struct SystemReportTests {
    @Test func aKernelLogRecordReadsAsDmesgPrintsIt() {
        #expect(SystemReport.formatRecord("6,339,5140900,-;snd-aloop: loopback ready\n SUBSYSTEM=sound\n")
            == "[    5.140900] snd-aloop: loopback ready")
        #expect(SystemReport.formatRecord("4,12,123,-;x") == "[    0.000123] x")
        #expect(SystemReport.formatRecord("not a record") == nil)
    }

    /// This machine's own: the kernel's version and the kernel log (root reads /dev/kmsg; CI is root).
    @Test func thisMachinesReportHasItsKernel() {
        let versions = SystemReport.versions()
        #expect(versions.first?.hasPrefix("kernel      Linux version ") == true, "\(versions)")
        let log = SystemReport.kernelLog(last: 50)
        #expect(!log.isEmpty && log.count <= 50)
        if getuid() == 0 { #expect(log.allSatisfy { $0.hasPrefix("[") }, "\(log.prefix(3))") }
    }

    @Test func theNameSortsByTime() {
        #expect(BundleFile.name(year: 2026, month: 11, day: 26, hour: 9, minute: 5, second: 7) == "stagebox-support-20261126-090507.txt")
    }

    /// BOOT is mounted read-only on the card: the bundle is written and the mount is read-only after.
    @Test func aReadOnlyMountIsWrittenAndLeftReadOnly() throws {
        guard let boot = TemporaryMount(sizeKB: 1024) else {
            print("a read-only BOOT: not run (a mount of its own needs root)")
            return
        }
        defer { boot.remove() }
        #expect(boot.remount(readOnly: true))
        let path = try BundleFile.write("== status ==\nok\n", into: boot.path, name: "bundle.txt")
        #expect(try WholeFile.read(path) == "== status ==\nok\n")
        #expect(boot.isReadOnly, "read-only again after the write")
    }
}

#if canImport(Glibc)
import Glibc
#endif
