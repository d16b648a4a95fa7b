import StageboxFormatting
import StageboxMedia
import StageboxRecorder
import StageboxTriggers
import Synchronization

/// The recorder's side of USB sticks: a mirror's copy ended at once when its stick goes, a
/// cut copy mended when it comes back, and `takes copy` (the console, the `copy-takes` trigger).
extension Recording {
    var stickHandlers: RemovableMedia.Handlers {
        .init(prepare: { [self] hidden in
            // The stick's folder name is the hidden one's without its dot.
            recorder.mediumMounted(hidden, shownAs: hidden.replacingLastDot())
        }, mounted: { [self] in stickMounted($0) }, gone: { [self] in stickGone($0, pulled: $1) })
    }

    func startSticks() {
        guard let media else { return }
        do {
            try media.start(stickHandlers)
            logger.info("media: USB sticks are mounted under \(media.root) when plugged")
        } catch {
            logger.error("media: \(error); USB sticks are not mounted by stagebox")
        }
    }

    /// `storage eject NAME`: unmounts a stick so that it can be pulled with nothing lost.
    func eject(_ name: String) -> String {
        guard let media else { return "refused: stagebox does not mount sticks here (mount_sticks = false)" }
        switch media.eject(name, handlers: stickHandlers) {
        case .success(let stick): return "\(stick.name) unmounted: it can be pulled"
        case .failure(let refusal): return "refused: \(refusal)"
        }
    }

    func stickMounted(_ stick: Stick) {
        for listener in stickListeners.withLock({ $0 }) { listener(stick) }
    }

    func stickGone(_ stick: Stick, pulled: Bool) {
        recorder.mediumGone(stick.mountPoint, pulled: pulled)
        copier.cancel(onto: stick.mountPoint, because: "the stick at \(stick.mountPoint) was \(pulled ? "pulled" : "ejected")")
        // The record LED shows the failed copy now, not at the control thread's next tick.
        if case let .failed(take, _) = recorder.mirrorState, take == recorder.status.take?.name {
            triggers.setState("record", .error)
        }
    }

    func addCopyTrigger() {
        triggers.add(name: "copy-takes", title: "Copy the takes a USB stick does not have yet onto it") { [self] in
            let answer = copyTakes([])
            if answer.hasPrefix("refused") {
                logger.error("takes copy: \(answer)")
                return .error
            }
            return .alternate
        }
    }

    /// `takes copy [usb|NAME|DIR] [--force]`: starts copying; answers at once.
    func copyTakes(_ arguments: [String]) -> String {
        let force = arguments.contains("--force")
        let targets = arguments.filter { $0 != "--force" }
        guard targets.count <= 1, !(targets.first?.hasPrefix("-") ?? false) else { return "usage: takes copy [usb|NAME|DIR] [--force]" }
        let target = targets.first ?? "usb"
        if recorder.isRecording && !force {
            return "refused: a take is recording (a copy would compete with it for the card; --force copies anyway, the take in progress left out)"
        }
        let directory: String
        let media = recorder.settings.mediaRoot
        if target != "usb" && !target.hasPrefix("/") && (target.contains { $0 == "/" } || target.hasPrefix(".")) {
            return "refused: '\(target)' is not a stick's name (as `storage` lists them under \(media)) or a path from /"
        }
        if target.hasPrefix("/") && !(target.hasPrefix(media + "/") && target.count > media.count + 1) {
            return "refused: \(target) is not on a stick: takes are copied to a folder under \(media)"
        }
        // A stick's name is its folder under the media root; its takes go in its folder `takes`.
        let byName = target != "usb" && !target.hasPrefix("/")
        switch MirrorTarget.resolve(byName ? media + "/" + target : target, mediaRoot: media, mainDirectory: recorder.settings.directory) {
        case .success(let found)?: directory = byName ? found + "/" + Recorder.stickFolder : found
        case .failure(let refusal)?: return "refused: \(refusal.reason)"
        case nil: return "refused: no target"
        }
        // The take being written (all its files and parts) stays out.
        let running = recorder.status.take?.name
        let takes = TakeCopier.missing(from: recorder.settings.directory, into: directory)
            .filter { running == nil || !$0.name.hasPrefix(running!) }
        if takes.isEmpty { return "nothing to copy: \(directory) has every take of \(recorder.settings.directory)" }
        let triggers = triggers
        triggers.setState("copy-takes", .alternate)
        let recorder = recorder
        let waitForTakes: @Sendable () -> Bool = { !force && recorder.isRecording }
        if let refusal = copier.start(takes, from: recorder.settings.directory, into: directory, waitWhile: waitForTakes, finished: { ended in
            if case .failed = ended { triggers.setState("copy-takes", .error) } else { triggers.setState("copy-takes", .normal) }
        }) {
            triggers.setState("copy-takes", .error)
            return "refused: \(refusal)"
        }
        let bytes = takes.reduce(0) { $0 + $1.bytes }
        return "copying \(takes.count) takes (\(fixed(Double(bytes) / 1e6, digits: 1)) MB) to \(directory); `takes copy status` shows how far"
    }

    /// Where `takes copy` stands, for `takes copy status` and `status`; nil before any copy.
    var copyStatus: String? {
        switch copier.current {
        case .idle: nil
        case let .copying(done, of, bytesDone, bytesTotal, into):
            "copying takes to \(into): \(bytesTotal > 0 ? bytesDone * 100 / bytesTotal : 100) % (\(done) of \(of) done)"
        case let .finished(copied, bytes, seconds, into):
            "copied \(copied) takes to \(into), verified: \(fixed(Double(bytes) / 1e6, digits: 1)) MB in \(fixed(seconds, digits: 1)) s"
        case .failed(let why): "takes copy failed: \(why)"
        }
    }
}

extension String {
    /// "/media/.TAKES" → "/media/TAKES".
    fileprivate func replacingLastDot() -> String {
        guard let slash = lastIndex(of: "/"), self[index(after: slash)...].hasPrefix(".") else { return self }
        return String(self[...slash]) + self[index(slash, offsetBy: 2)...]
    }
}
