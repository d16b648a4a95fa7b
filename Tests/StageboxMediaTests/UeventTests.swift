@testable import StageboxMedia
import Testing

@Suite struct UeventTests {
    private func message(_ fields: [String]) -> [UInt8] { fields.flatMap { Array($0.utf8) + [0] } }

    @Test func aKernelMessageGivesItsActionAndProperties() throws {
        let event = try #require(Uevent(message: message([
            "add@/devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda1",
            "ACTION=add", "DEVPATH=/devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda1",
            "SUBSYSTEM=block", "MAJOR=8", "MINOR=1", "DEVNAME=sda1", "DEVTYPE=partition", "PARTN=1", "SEQNUM=2711",
        ])))
        #expect(event.action == "add")
        #expect(event.subsystem == "block")
        #expect(event.deviceName == "sda1")
        #expect(event.deviceType == "partition")
        #expect(event.properties["SEQNUM"] == "2711")
    }

    @Test func udevsOwnMessagesAndTornOnesAreNotEvents() {
        #expect(Uevent(message: message(["libudev", "ACTION=add"])) == nil)
        #expect(Uevent(message: message(["remove@/devices/x"])) == nil) // no ACTION: torn
        #expect(Uevent(message: [UInt8]()) == nil)
        #expect(Uevent(message: message(["no header", "ACTION=add"])) == nil)
    }

    @Test func aDeviceNameWithItsFolderLosesIt() {
        #expect(Uevent(action: "add", properties: ["DEVNAME": "/dev/sdb"]).deviceName == "sdb")
    }
}

@Suite struct StickNameTests {
    @Test func aLabelNamesTheFolderWithWhatAPathTripsOnReplaced() {
        #expect(folderName(label: "TAKES", device: "sda1") == "TAKES")
        #expect(folderName(label: "My Stick/2", device: "sda1") == "My_Stick_2")
        #expect(folderName(label: "..", device: "sda1") == "sda1")
        #expect(folderName(label: "  ", device: "sdb1") == "sdb1")
        #expect(folderName(label: nil, device: "sdb") == "sdb")
        #expect(folderName(label: "Zoom F6", device: "sdc1") == "Zoom_F6")
    }
}
