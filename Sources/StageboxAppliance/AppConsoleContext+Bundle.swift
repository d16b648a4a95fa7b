import StageboxConfig
import StageboxDiagnostics
import StageboxFormatting
import StageboxSystem

extension AppConsoleContext {
    /// `diag bundle`: stagebox's own header, the system's report, the console's sections, the
    /// ALSA cards and the kernel log's tail, in one file; on the card, beside `stagebox.toml`
    /// on BOOT, where any computer reads it.
    func writeSupportBundle(_ sections: [(title: String, lines: [String])], into directory: String?) -> String {
        let started = monotonicNanoseconds()
        var bundle = SupportBundle()
        bundle.add("stagebox support bundle", ["stagebox    \(version)", "config      \(configSource)"]
            + (updateStatus.map { ["system      \($0)"] } ?? []) + SystemReport.versions())
        for s in sections { bundle.add(s.title, s.lines) }
        bundle.add("ALSA cards (/proc/asound/cards)", SystemReport.alsaCards())
        bundle.add("kernel log (the last 300 lines)", SystemReport.kernelLog(last: 300))
        let text = bundle.text()
        let folder = directory ?? defaultBundleDirectory
        do {
            let path = try BundleFile.write(text, into: folder)
            let seconds = Double(monotonicNanoseconds() - started) / 1e9
            return "wrote \(path) (\(fixed(Double(text.utf8.count) / 1000, digits: 1)) kB in \(fixed(seconds, digits: 2)) s)"
        } catch {
            return "refused: the support bundle cannot be written: \(error)"
        }
    }

    /// Beside the configuration file, even one with problems (the case a bundle is most
    /// wanted for); /tmp with none.
    var defaultBundleDirectory: String { BundleFile.defaultFolder(configFile: configFile) }
}
