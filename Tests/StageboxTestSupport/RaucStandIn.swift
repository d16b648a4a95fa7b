import Foundation

/// A shell script in RAUC's place (StageboxUpdateTests, and the binary's update command), for the logic above RAUC (the real one runs on the emulated
/// Pi: tools/vm/scenarios/pi-update). It answers `status`, `info` and `install` as RAUC 1.8's
/// command line does (shell output, "NN% step" lines, "LastError: " on a failure), from files
/// the test writes, and logs every call to calls.log.
public struct RaucStandIn {
    public let scratch: Scratch
    public var path: String { scratch.path("rauc") }
    public var calls: [String] {
        ((try? String(contentsOfFile: scratch.path("calls.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    public init(booted: String = "A", version: String = "0.1.0-1", bundleVersion: String = "0.1.0-2",
         compatible: String = "stagebox-rpi", installFails: String? = nil, otherSlotStatus: String = "good",
         copySeconds: Int = 0) throws {
        scratch = try Scratch()
        _ = try scratch.write("release", "VERSION=\(version)\nCOMPATIBLE=stagebox-rpi\n")
        let failure = installFails.map { "echo '  40% Copying image'; echo 'LastError: \($0)'; echo 'Installing failed' >&2; exit 1" } ?? ""
        let script = """
            #!/bin/sh
            echo "$*" >>'\(scratch.path("calls.log"))'
            case "$1 $2" in
            "status --detailed")
            \tcat <<'EOS'
            RAUC_SYSTEM_COMPATIBLE='stagebox-rpi'
            RAUC_SYSTEM_VARIANT=''
            RAUC_SYSTEM_BOOTED_BOOTNAME='\(booted)'
            RAUC_BOOT_PRIMARY='rootfs.\(booted == "A" ? 0 : 1)'
            RAUC_SYSTEM_SLOTS='rootfs.1 rootfs.0'
            RAUC_SLOTS='1 2'
            RAUC_SLOT_STATE_1='\(booted == "B" ? "booted" : "inactive")'
            RAUC_SLOT_BOOTNAME_1='B'
            RAUC_SLOT_BOOT_STATUS_1='\(booted == "B" ? "good" : otherSlotStatus)'
            RAUC_SLOT_STATUS_BUNDLE_VERSION_1='0.0.9 it'\\''s old'
            RAUC_SLOT_STATE_2='\(booted == "A" ? "booted" : "inactive")'
            RAUC_SLOT_BOOTNAME_2='A'
            RAUC_SLOT_BOOT_STATUS_2='good'
            RAUC_SLOT_STATUS_BUNDLE_VERSION_2=''
            EOS
            \texit 0 ;;
            "status mark-good" | "status mark-active") echo "rauc-Message: marked"; exit 0 ;;
            esac
            case "$1" in
            info)
            \t[ -e "$3" ] || { echo "rauc-Critical: Failed to open bundle $3" >&2; exit 1; }
            \tprintf "RAUC_MF_COMPATIBLE='\(compatible)'\\nRAUC_MF_VERSION='\(bundleVersion)'\\n"; exit 0 ;;
            install)
            \techo '  0% Installing'; echo ' 20% Checking bundle'; \(failure)
            \t\(copySeconds > 0 ? "echo ' 40% Copying image to rootfs.1'; sleep \(copySeconds)" : ":")
            \techo ' 60% Copying image to rootfs.1'; echo '100% Installing done.'; echo "Installing \\`$2\\` succeeded"; exit 0 ;;
            esac
            echo "unexpected: $*" >&2
            exit 2
            """
        try scratch.writeExecutable("rauc", script)
    }
}
