import ArgumentParser
import StageboxClient
import StageboxConfig
import StageboxDiagnostics

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `stagebox diag bundle [DIR]`: the console's `diag bundle` from a shell. When no stagebox
/// runs (it will not start: the case a bundle is most wanted for), it writes what it can
/// gather itself: the versions, the configuration's check, the ALSA cards, the kernel log.
struct DiagBundle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Write a support bundle: one text file of what a helper asks for, secrets removed.",
        discussion: """
            Through the running stagebox: its status, configuration, ports, clients, xruns with \
            their context, health, takes, storage, state, the last 2,000 log lines; with the \
            system's versions, the ALSA cards and the kernel log's tail. Without one: what this \
            command can gather by itself, with the check of the configuration file (--config, else \
            /boot/stagebox.toml, then /etc/stagebox.toml). The file goes to DIR, else beside the \
            configuration file, even one with problems (BOOT on the card, which any computer reads), \
            else /tmp.
            """)
    @OptionGroup var bus: BusOptions
    @Argument(help: "The folder to write the bundle into (no spaces: the console splits its line on them).") var directory: String?

    func validate() throws {
        if let directory { _ = try ConsolePath.absolute(directory, "the folder") }
    }

    func run() throws {
        let folder = try directory.map { try ConsolePath.absolute($0, "the folder") }
        let reason: String
        do {
            let client = try BusClient(name: "diag-\(getpid())", socketPath: bus.socketPath)
            defer { client.close() }
            let (answer, failed) = try busRequest { () throws(BusClientError) in
                try client.consoleRun("diag bundle" + (folder.map { " \($0)" } ?? ""))
            }
            print(answer)
            if failed { throw ExitCode(1) }
            return
        } catch let error as BusClientError {
            reason = "\(error)"
        }
        try writeWithoutStagebox(into: folder, because: reason)
    }

    private func writeWithoutStagebox(into directory: String?, because reason: String) throws {
        let loaded = ConfigLoader.resolve(explicit: bus.config)
        var bundle = SupportBundle()
        bundle.add("stagebox support bundle (stagebox not running)",
                   ["stagebox    \(StageboxVersion.string)", "not running \(reason)"] + SystemReport.versions())
        bundle.add("configuration check", ["configuration from \(loaded.source)"]
            + (loaded.problems.isEmpty ? ["no problems"] : loaded.problems.map { "  \($0)" }))
        bundle.add("ALSA cards (/proc/asound/cards)", SystemReport.alsaCards())
        bundle.add("kernel log (the last 300 lines)", SystemReport.kernelLog(last: 300))
        let folder = directory ?? BundleFile.defaultFolder(configFile: loaded.file)
        do {
            print("stagebox is not running (\(reason)): wrote what this command gathers itself to "
                + (try BundleFile.write(bundle.text(), into: folder)))
        } catch {
            printError("stagebox: the support bundle cannot be written: \(error)")
            throw ExitCode(1)
        }
    }
}
