import Logging
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// USB sticks, mounted when they are plugged and let go when they are pulled. Its own thread
/// listens to the kernel's device events (there is no udev or mdev on the card to do it), so a
/// pull is known within milliseconds, whatever the recorder's threads are doing. A plugged
/// stick is checked (a stick pulled mid-write is mended first) and mounted under the media
/// root, without `sync` (a take's writer flushes on its own interval).
public final class RemovableMedia: @unchecked Sendable {
    // @unchecked: `events` and `started` are used only on the media thread (its turns), and
    // `loop` is set once by `start`, before that thread runs; the table is behind its Mutex.
    public struct Handlers: Sendable {
        /// A stick is mounted at this hidden folder (`.NAME` under the root), before anyone can
        /// pick it under its name: mend what is on it (on the media thread).
        public var prepare: @Sendable (String) -> Void
        /// A stick was mounted under its name (on the media thread).
        public var mounted: @Sendable (Stick) -> Void
        /// A stick went: pulled (`pulled`) or ejected at the console.
        public var gone: @Sendable (Stick, _ pulled: Bool) -> Void

        public init(prepare: @escaping @Sendable (String) -> Void = { _ in }, mounted: @escaping @Sendable (Stick) -> Void,
                    gone: @escaping @Sendable (Stick, Bool) -> Void) {
            self.prepare = prepare
            self.mounted = mounted
            self.gone = gone
        }
    }

    public let root: String
    private let sysfs: String
    private let logger: Logger
    private let table = Mutex<[Stick]>([])
    /// Devices seen that hold nothing to mount, with why (for `storage`).
    private let refused = Mutex<[String: String]>([:])
    /// Devices ejected at the console: not mounted again until they are pulled and plugged.
    private let ejected = Mutex<Set<String>>([])
    private var events: UeventSocket?
    private var started = false
    private var loop: ServiceLoop?

    public init(root: String = "/media", sysfs: String = "/sys", logger: Logger) {
        self.root = root
        self.sysfs = sysfs
        self.logger = logger
    }

    /// The sticks mounted now, in the order they came.
    public var sticks: [Stick] { table.withLock { $0 } }
    /// USB devices plugged that are not mounted, with why.
    public var refusals: [(device: String, reason: String)] {
        refused.withLock { $0.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    public func start(_ handlers: Handlers) throws(SystemCallError) {
        events = try UeventSocket()
        let started = try ServiceLoop(named: "the media")
        loop = started
        try started.start { [self] turn in self.turn(turn, handlers) }
    }

    /// Stops listening; what is mounted stays mounted (a stop is not a pull).
    public func stop() { loop?.stop() }

    /// Unmounts a stick so it can be pulled with nothing lost: refused while something writes to it.
    public func eject(_ name: String, handlers: Handlers) -> Result<Stick, StickRefusal> {
        guard let stick = sticks.first(where: { $0.name == name || $0.device == name }) else {
            let names = sticks.map(\.name)
            return .failure(StickRefusal("no stick \(name) is mounted" + (names.isEmpty ? "" : " (mounted: \(names.joined(separator: ", ")))")))
        }
        guard umount2(stick.mountPoint, 0) == 0 else {
            let error = SystemCallError.last("unmounting", stick.mountPoint)
            return .failure(StickRefusal(error.errno == .resourceBusy ? "\(stick.mountPoint) is in use (a take or a copy is writing to it)" : "\(error)"))
        }
        rmdir(stick.mountPoint)
        table.withLock { $0.removeAll { $0.device == stick.device } }
        ejected.withLock { _ = $0.insert(stick.device) }
        logger.info("media: \(stick.name) (\(stick.device)) unmounted: it can be pulled")
        handlers.gone(stick, false)
        return .success(stick)
    }

    // MARK: the media thread

    private func turn(_ turn: ServiceLoop.Turn, _ handlers: Handlers) -> ServiceLoop.Next {
        guard let events else { return .init() }
        if !started {
            started = true
            rescan(handlers) // the sticks plugged before stagebox started
        }
        let (received, lost) = events.receive()
        let block = received.filter { $0.subsystem == "block" }
        // Pulls first: a copy on a pulled stick ends before any check of a new one begins.
        for event in block where event.action == "remove" {
            if let device = event.deviceName { pulled(device, handlers) }
        }
        for event in block where event.action == "add" || event.action == "change" {
            guard let device = event.deviceName, !sticks.contains(where: { $0.device == device }) else { continue }
            plugged(device, handlers)
        }
        if lost {
            logger.warning("media: device events were lost (a burst larger than the socket's buffer); looking again")
            rescan(handlers)
        }
        return .reading([events.descriptor.rawValue])
    }

    /// Mounts what is plugged and not mounted; lets go of what is mounted and gone. A stick
    /// mounted under the root by an earlier run is taken over as it is; one mounted elsewhere
    /// (by someone else) is left alone.
    private func rescan(_ handlers: Handlers) {
        let devices = BlockDevice.all(sysfs: sysfs)
        let present = Set(devices.map(\.name))
        for stick in sticks where !present.contains(stick.device) { pulled(stick.device, handlers) }
        let mounts = Self.mounts()
        for device in devices where device.mayHoldStick && !sticks.contains(where: { $0.device == device.name }) {
            guard let mount = mounts["/dev/" + device.name] else {
                plugged(device.name, handlers)
                continue
            }
            guard mount.point.hasPrefix(root + "/") else { continue }
            if mount.point.dropFirst(root.count + 1).hasPrefix(".") {
                // Left mid-check by a stagebox that stopped: checked and mounted again.
                umount2(mount.point, Int32(MNT_DETACH))
                rmdir(mount.point)
                plugged(device.name, handlers)
                continue
            }
            let stick = Stick(device: device.name, mountPoint: mount.point, filesystem: StickFilesystem(type: mount.type, label: nil),
                              readOnly: mount.readOnly, note: "mounted before stagebox started")
            table.withLock { $0.append(stick) }
            logger.info("media: stick \(stick.name) (\(device.name)) already mounted at \(mount.point)")
            handlers.mounted(stick)
        }
    }

    private func plugged(_ name: String, _ handlers: Handlers) {
        guard let device = BlockDevice(name: name, sysfs: sysfs), device.mayHoldStick,
              !sticks.contains(where: { $0.device == name }), !ejected.withLock({ $0.contains(name) }) else { return }
        let t0 = monotonicNanoseconds()
        switch mountStick(device, handlers) {
        case .success(let stick):
            refused.withLock { $0[name] = nil }
            table.withLock { $0.append(stick) }
            let ms = (monotonicNanoseconds() - t0) / 1_000_000
            logger.info("media: \(stick.filesystem.type) stick \(stick.name) (\(name)) mounted at \(stick.mountPoint) in \(ms) ms\(stick.readOnly ? ", read-only" : "")\(stick.note.map { ": \($0)" } ?? "")")
            handlers.mounted(stick)
        case .failure(let refusal):
            refused.withLock { $0[name] = refusal.reason }
            logger.warning("media: \(name) not mounted: \(refusal)")
        }
    }

    private func pulled(_ name: String, _ handlers: Handlers) {
        refused.withLock { $0[name] = nil }
        ejected.withLock { _ = $0.remove(name) }
        guard let stick = sticks.first(where: { $0.device == name }) else { return }
        let t0 = monotonicNanoseconds()
        // Detached at once: nothing new reaches it; files still open fail from now on.
        let detached = umount2(stick.mountPoint, Int32(MNT_DETACH)) == 0 ? nil : SystemCallError.last("detaching", stick.mountPoint)
        table.withLock { $0.removeAll { $0.device == name } }
        handlers.gone(stick, true)
        let micros = (monotonicNanoseconds() - t0) / 1000
        rmdir(stick.mountPoint)
        logger.warning("media: stick \(stick.name) (\(name)) was pulled without being ejected; detached and the recorder told \(micros) µs after stagebox read the kernel's event")
        if let detached { logger.warning("media: \(detached)") }
    }

    /// Probes, checks and mounts a stick at a hidden folder, lets `prepare` mend what is on it,
    /// then moves it under its name, where the mirror and `takes copy` can find it.
    private func mountStick(_ device: BlockDevice, _ handlers: Handlers) -> Result<Stick, StickRefusal> {
        let path = "/dev/" + device.name
        let filesystem: StickFilesystem
        switch StickFilesystem.probe(path) {
        case .success(let found): filesystem = found
        case .failure(let refusal): return .failure(refusal)
        }
        var note: String?
        var readOnly = false
        switch filesystem.check(path) {
        case .clean: break
        case .repaired(let said), .notChecked(let said): note = said
        case .damaged(let said):
            note = said + "; mounted read-only"
            readOnly = true
        }
        let mountPoint: String
        switch makeMountPoint(for: filesystem, device: device.name) {
        case .success(let made): mountPoint = made
        case .failure(let refusal): return .failure(refusal)
        }
        let slash = mountPoint.lastIndex(of: "/")!
        let hidden = String(mountPoint[..<slash]) + "/." + mountPoint[mountPoint.index(after: slash)...]
        guard mkdir(hidden, 0o755) == 0 || errno == EEXIST else {
            rmdir(mountPoint)
            return .failure(StickRefusal("\(SystemCallError.last("making", hidden))"))
        }
        // No set-user-ID programs, device files or executables from a stick, and no symbolic
        // links followed on it (MS_NOSYMFOLLOW, Linux 5.10): a stick's `takes` must not lead
        // the mirror, `takes copy` or the repair onto the card.
        var flags = UInt(MS_NOATIME | MS_NODEV | MS_NOSUID | MS_NOEXEC) | Self.noSymlinks
        if readOnly { flags |= UInt(MS_RDONLY) }
        var mounted = mount(path, hidden, filesystem.kernelType, flags, nil) == 0
        if !mounted && !readOnly && (errno == EROFS || errno == EACCES) {
            // A write-protected stick: read-only, to copy off what is on it.
            flags |= UInt(MS_RDONLY)
            readOnly = true
            note = (note.map { $0 + "; " } ?? "") + "write-protected: mounted read-only"
            mounted = mount(path, hidden, filesystem.kernelType, flags, nil) == 0
        }
        guard mounted else {
            let error = SystemCallError.last("mounting \(path) (\(filesystem.type)) at", hidden)
            rmdir(hidden)
            rmdir(mountPoint)
            let hint = error.errno.rawValue == ENODEV ? " (the kernel has no \(filesystem.kernelType) driver loaded)"
                : error.errno == .notPermitted ? " (mounting needs root)" : ""
            return .failure(StickRefusal("\(error)\(hint)"))
        }
        if !readOnly { handlers.prepare(hidden) }
        guard mount(hidden, mountPoint, nil, UInt(MS_MOVE), nil) == 0 else {
            let error = SystemCallError.last("moving the mount \(hidden) to", mountPoint)
            umount2(hidden, Int32(MNT_DETACH))
            rmdir(hidden)
            rmdir(mountPoint)
            return .failure(StickRefusal("\(error)"))
        }
        rmdir(hidden)
        return .success(Stick(device: device.name, mountPoint: mountPoint, filesystem: filesystem, readOnly: readOnly, note: note))
    }

    /// MS_NOSYMFOLLOW (linux/mount.h; glibc's headers may not name it).
    static let noSymlinks: UInt = 256

    /// A new empty folder under the root for the stick: its label's name, or that name with a
    /// number when another stick has it.
    private func makeMountPoint(for filesystem: StickFilesystem, device: String) -> Result<String, StickRefusal> {
        if mkdir(root, 0o755) != 0 && errno != EEXIST {
            return .failure(StickRefusal("\(SystemCallError.last("making", root))"))
        }
        let base = folderName(label: filesystem.label, device: device)
        for n in 1...99 {
            let path = root + "/" + (n == 1 ? base : "\(base)-\(n)")
            if mkdir(path, 0o755) == 0 { return .success(path) }
            if errno == EEXIST {
                // An empty folder left by an earlier run (a stop is not a pull) is used again.
                if !Self.isMountPoint(path), Folder.names(in: path).isEmpty { return .success(path) }
                continue
            }
            return .failure(StickRefusal("\(SystemCallError.last("making the mount point", path))"))
        }
        return .failure(StickRefusal("no free folder for \(base) under \(root)"))
    }

    private static func isMountPoint(_ path: String) -> Bool {
        var here = stat(), parent = stat()
        return stat(path, &here) == 0 && stat(path + "/..", &parent) == 0 && here.st_dev != parent.st_dev
    }

    /// What is mounted now, by device ("/dev/sda1"), from /proc/self/mounts.
    static func mounts() -> [String: (point: String, type: String, readOnly: Bool)] {
        guard let file = fopen("/proc/self/mounts", "r") else { return [:] }
        defer { fclose(file) }
        var found: [String: (point: String, type: String, readOnly: Bool)] = [:]
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), file) != nil {
            let fields = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.split(separator: " ").map(String.init)
            guard fields.count >= 4 else { continue }
            let point = fields[1].replacingEscapedSpaces()
            found[fields[0]] = (point, fields[2], fields[3].split(separator: ",").contains("ro"))
        }
        return found
    }
}

extension String {
    /// /proc/self/mounts writes a space in a path as \040.
    fileprivate func replacingEscapedSpaces() -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: "\\040") {
            out += rest[..<range.lowerBound] + " "
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
