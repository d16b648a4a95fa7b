import ArgumentParser
import StageboxClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `stagebox update FILE`: the console's `update` from a shell on the box (over SSH, a
/// script), following the install with its progress in percent until it is in or failed.
struct UpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Install an update bundle into the other root slot (a card with two), or show the slots.",
        discussion: """
            With FILE: installs it through the running stagebox (RAUC), printing the progress, and \
            exits 0 once it is in (stagebox then reboots into it) or 1 with the reason it failed, \
            or when the connection closed before the install said either (stagebox stopped, or \
            the box lost power: `stagebox update` once it is back shows where the slots stand). \
            A relative FILE is taken from the folder the command runs in. \
            Without: where updates stand and both slots with their versions.
            """)
    @OptionGroup var bus: BusOptions
    @Argument(help: "The update bundle (.raucb), a path on the box (no spaces: the console splits its line on them).") var file: String?
    @Flag(help: "Install it even when it is older than the running system.") var force = false
    @Flag(help: "Boot the other slot instead (and reboot now).") var rollback = false

    func validate() throws {
        if rollback && (file != nil || force) { throw ValidationError("--rollback takes no FILE and no --force") }
        if force && file == nil { throw ValidationError("--force needs a FILE") }
        if let file { _ = try ConsolePath.absolute(file, "the update bundle") }
    }

    func run() throws {
        let client = try bus.connect(as: "update-\(getpid())")
        defer { client.close() }
        let path = try file.map { try ConsolePath.absolute($0, "the update bundle") }
        let line = rollback ? "update --rollback" : path.map { "update \($0)" + (force ? " --force" : "") } ?? "update"
        let (answer, failed) = try busRequest { () throws(BusClientError) in try client.consoleRun(line) }
        print(answer)
        if failed { throw ExitCode(1) }
        guard file != nil else { return }
        // Follow the install: `update`'s first line until it says in or failed.
        var last = ""
        while true {
            usleep(500_000)
            let text: String
            do { text = try client.console("update") } catch {
                printError("stagebox: no answer before the install ended (\(error); last: \(last.isEmpty ? "nothing yet" : last)): "
                    + "stagebox stopped or the box restarted; `stagebox update` once it is back shows where the slots stand")
                throw ExitCode(1)
            }
            let phase = String(text.split(separator: "\n").first ?? "")
            if phase != last {
                print(phase)
                fflush(nil)
                last = phase
            }
            // hasSuffix, not contains: this module sees Foundation (through ArgumentParser), whose
            // contains(String) would link ICU's 34 MB into the appliance (tools/build-static).
            if phase.hasSuffix(" installed in the other slot; it runs after the reboot") { return }
            if phase.hasPrefix("the last update failed") { throw ExitCode(1) }
        }
    }
}
