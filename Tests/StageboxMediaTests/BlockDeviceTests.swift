import StageboxMedia
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A sysfs tree as the kernel lays out a USB stick with one partition, a stick formatted
/// whole, and the card's own disk (a virtio disk in the VM rig, mmcblk0 on a Pi).
@Suite struct BlockDeviceTests {
    private let root: String

    init() throws {
        var template = Array("/tmp/stagebox-sysfs.XXXXXX".utf8CString)
        root = try #require(mkdtemp(&template).map { String(cString: $0) })
        let usb = "devices/pci0000:00/0000:00:04.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block"
        let usbWhole = "devices/pci0000:00/0000:00:04.0/usb2/2-2/2-2:1.0/host1/target1:0:0/1:0:0:0/block"
        make(usb + "/sda/size", "3907584")
        make(usb + "/sda/sda1/size", "3905536")
        make(usb + "/sda/sda1/partition", "1")
        make(usbWhole + "/sdb/size", "131072")
        make("devices/platform/soc/mmc0/block/mmcblk0/size", "62333952")
        make("devices/platform/soc/mmc0/block/mmcblk0/mmcblk0p1/size", "524288")
        make("devices/platform/soc/mmc0/block/mmcblk0/mmcblk0p1/partition", "1")
        make(usb + "/sdc/size", "0") // a card reader with no card in it
        mkdir(root + "/class", 0o755)
        mkdir(root + "/class/block", 0o755)
        for (name, path) in [("sda", usb + "/sda"), ("sda1", usb + "/sda/sda1"), ("sdb", usbWhole + "/sdb"),
                             ("mmcblk0", "devices/platform/soc/mmc0/block/mmcblk0"),
                             ("mmcblk0p1", "devices/platform/soc/mmc0/block/mmcblk0/mmcblk0p1"), ("sdc", usb + "/sdc")] {
            symlink("../../" + path, root + "/class/block/" + name)
        }
    }

    private func make(_ path: String, _ text: String) {
        var folder = root
        for part in path.split(separator: "/").dropLast() {
            folder += "/" + part
            mkdir(folder, 0o755)
        }
        guard let file = fopen(root + "/" + path, "w") else { return }
        fputs(text + "\n", file)
        fclose(file)
    }

    @Test func aStickIsItsPartitionOrTheWholeDiskWhenItHasNone() throws {
        let sda = try #require(BlockDevice(name: "sda", sysfs: root))
        #expect(sda.onUSB && !sda.isPartition && sda.hasPartitions && !sda.mayHoldStick)
        let sda1 = try #require(BlockDevice(name: "sda1", sysfs: root))
        #expect(sda1.onUSB && sda1.isPartition && sda1.mayHoldStick)
        #expect(sda1.sizeBytes == 3_905_536 * 512)
        let sdb = try #require(BlockDevice(name: "sdb", sysfs: root))
        #expect(sdb.onUSB && !sdb.hasPartitions && sdb.mayHoldStick)
    }

    @Test func theCardsOwnDiskAndAnEmptyReaderAreNotSticks() throws {
        #expect(try #require(BlockDevice(name: "mmcblk0p1", sysfs: root)).mayHoldStick == false)
        #expect(try #require(BlockDevice(name: "sdc", sysfs: root)).mayHoldStick == false)
        #expect(BlockDevice(name: "sdz", sysfs: root) == nil)
        #expect(Set(BlockDevice.all(sysfs: root).filter(\.mayHoldStick).map(\.name)) == ["sda1", "sdb"])
    }
}
