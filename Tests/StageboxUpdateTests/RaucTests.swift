import Foundation
import StageboxTestSupport
import StageboxUpdate
import Testing

/// RAUC's command line read as RAUC 1.8 writes it (the stand-in speaks its formats).
@Suite struct RaucTests {
    @Test func statusNamesTheSlotsTheirStatesAndVersions() throws {
        let rauc = try RaucStandIn(booted: "B")
        defer { rauc.scratch.remove() }
        let report = try Rauc(path: rauc.path).status()
        #expect(report.booted == "B")
        #expect(report.primary == "B")
        #expect(report.slots.map(\.bootname) == ["A", "B"])
        #expect(report.bootedSlot?.state == "booted")
        #expect(report.bootedSlot?.bundleVersion == "0.0.9 it's old", "a quote inside a quoted value")
        #expect(report.otherSlot?.bundleVersion == nil, "an empty version is none")
    }

    @Test func installReportsEachStepAndFailsWithRaucsReason() throws {
        let good = try RaucStandIn()
        defer { good.scratch.remove() }
        var steps: [String] = []
        try Rauc(path: good.path).install("/data/x.raucb") { steps.append("\($0) \($1)") }
        #expect(steps == ["0 Installing", "20 Checking bundle", "60 Copying image to rootfs.1", "100 Installing done."])

        let bad = try RaucStandIn(installFails: "Failed to verify bundle signature: certificate verify failed")
        defer { bad.scratch.remove() }
        #expect {
            try Rauc(path: bad.path).install("/data/x.raucb") { _, _ in }
        } throws: { error in
            "\(error)" == "installing /data/x.raucb: Failed to verify bundle signature: certificate verify failed"
        }
    }

    @Test func aMissingRaucIsNamed() {
        #expect {
            try Rauc(path: "/nonexistent/rauc").status()
        } throws: { error in
            "\(error)".contains("/nonexistent/rauc") && "\(error)".contains("No such file")
        }
    }
}
