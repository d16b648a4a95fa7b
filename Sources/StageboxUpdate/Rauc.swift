import StageboxSystem

/// An error of the update engine, in words a person at the console can act on.
public struct UpdateError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// What `rauc status` says of the card's root slots.
public struct SlotReport: Sendable, Equatable {
    public struct Slot: Sendable, Equatable {
        /// RAUC's name (rootfs.0) and the bootloader's (A).
        public var name: String
        public var bootname: String
        /// booted, active or inactive.
        public var state: String
        /// good or bad, as the bootloader's variables say.
        public var bootStatus: String
        /// The version of the bundle last installed there (nil: the slot is as the card came).
        public var bundleVersion: String?
        public var installedAt: String?
    }

    public var compatible: String
    /// The slot running now (its bootname), and the one the bootloader tries first.
    public var booted: String
    public var primary: String?
    public var slots: [Slot]

    public var bootedSlot: Slot? { slots.first { $0.bootname == booted } }
    public var otherSlot: Slot? { slots.first { $0.bootname != booted } }
}

/// What `rauc info` says of a bundle: whom it is for and its version (its signature checked).
public struct BundleInfo: Sendable, Equatable {
    public var compatible: String
    public var version: String
}

/// RAUC's command line (/usr/bin/rauc on the card: it finds RAUC's service on its private bus).
/// Every call blocks until rauc exits: call it from a thread of its own, never the audio thread.
public struct Rauc: Sendable {
    public let path: String

    public init(path: String = "/usr/bin/rauc") { self.path = path }

    public func status() throws(UpdateError) -> SlotReport {
        let out = try run(["status", "--detailed", "--output-format=shell"], what: "reading the slots' status")
        let v = ShellAssignments.parse(out.lines)
        let names = (v["RAUC_SYSTEM_SLOTS"] ?? "").split(separator: " ").map(String.init)
        let numbers = (v["RAUC_SLOTS"] ?? "").split(separator: " ").map(String.init)
        var slots: [SlotReport.Slot] = []
        for (name, n) in zip(names, numbers) where v["RAUC_SLOT_BOOTNAME_\(n)"].map({ !$0.isEmpty }) == true {
            slots.append(.init(name: name, bootname: v["RAUC_SLOT_BOOTNAME_\(n)"] ?? "",
                               state: v["RAUC_SLOT_STATE_\(n)"] ?? "?", bootStatus: v["RAUC_SLOT_BOOT_STATUS_\(n)"] ?? "?",
                               bundleVersion: v["RAUC_SLOT_STATUS_BUNDLE_VERSION_\(n)"].flatMap { $0.isEmpty ? nil : $0 },
                               installedAt: v["RAUC_SLOT_STATUS_INSTALLED_TIMESTAMP_\(n)"].flatMap { $0.isEmpty ? nil : $0 }))
        }
        guard let booted = v["RAUC_SYSTEM_BOOTED_BOOTNAME"], !slots.isEmpty else {
            throw UpdateError("rauc status said no slots: \(out.lines.suffix(2).joined(separator: " "))")
        }
        let primary = v["RAUC_BOOT_PRIMARY"].flatMap { p in slots.first { $0.name == p }?.bootname }
        return SlotReport(compatible: v["RAUC_SYSTEM_COMPATIBLE"] ?? "", booted: booted, primary: primary,
                          slots: slots.sorted { $0.bootname < $1.bootname })
    }

    /// The bundle's manifest, once RAUC has checked its signature against the card's keyring.
    public func info(_ bundle: String) throws(UpdateError) -> BundleInfo {
        let out = try run(["info", "--output-format=shell", bundle], what: "checking \(bundle)")
        let v = ShellAssignments.parse(out.lines)
        guard let compatible = v["RAUC_MF_COMPATIBLE"], let version = v["RAUC_MF_VERSION"] else {
            throw UpdateError("\(bundle): rauc info found no manifest")
        }
        return BundleInfo(compatible: compatible, version: version)
    }

    /// Installs the bundle into the slot not running; `progress` gets RAUC's percentages and
    /// steps as they come. The bootloader boots that slot next.
    public func install(_ bundle: String, progress: (Int, String) -> Void) throws(UpdateError) {
        _ = try run(["install", bundle], what: "installing \(bundle)") { line in
            // "  20% Checking bundle", as rauc prints its service's progress.
            let trimmed = line.drop { $0 == " " }
            guard let percent = trimmed.firstIndex(of: "%"), let value = Int(trimmed[..<percent]) else { return }
            progress(value, String(trimmed[trimmed.index(after: percent)...].drop { $0 == " " }))
        }
    }

    /// Marks the running slot good: the bootloader gives it its tries back.
    public func markGood() throws(UpdateError) {
        _ = try run(["status", "mark-good"], what: "marking the running slot good")
    }

    /// Makes the other slot the one the bootloader boots next.
    public func activateOther() throws(UpdateError) {
        _ = try run(["status", "mark-active", "other"], what: "making the other slot the next to boot")
    }

    @discardableResult
    private func run(_ arguments: [String], what: String, onLine: (String) -> Void = { _ in }) throws(UpdateError) -> ChildProcess.Outcome {
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.run(path, arguments, onLine: onLine)
        } catch {
            throw UpdateError("\(what): \(error)")
        }
        guard outcome.status == 0 else { throw UpdateError("\(what): \(Self.reason(outcome.lines))") }
        return outcome
    }

    /// RAUC's own words for a failure: its last error line, without its log prefixes.
    static func reason(_ lines: [String]) -> String {
        // An install's failure comes from the service as "LastError: why".
        if let last = lines.last(where: { $0.hasPrefix("LastError: ") }) { return String(last.dropFirst(11)) }
        let meaningful = lines.map { $0.trimmingPrefix("rauc-Message: ").trimmingPrefix("rauc-Critical: ") }
            .filter { !$0.isEmpty && !$0.hasPrefix("idle") && !$0.contains("% ") }
        let errors = meaningful.filter { $0.mentions("error") || $0.mentions("failed") }
        return (errors.last ?? meaningful.last ?? "rauc failed without a word").trimmedLeadingBlanks
    }
}

extension StringProtocol {
    fileprivate func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : String(self)
    }
    fileprivate var trimmedLeadingBlanks: String { String(drop { $0 == " " || $0 == "\t" }) }
    fileprivate func mentions(_ word: String) -> Bool { lowercased().contains(word) }
}
