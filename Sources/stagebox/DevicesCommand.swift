import ArgumentParser
import CALSA
import StageboxDrivers

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the PCMs alsa-lib knows, with what each supports.")

    func run() throws {
        stagebox_alsa_silence_errors()
        let devices = DeviceList.pcms()
        if devices.isEmpty { print("alsa-lib knows no PCMs") }
        for d in devices {
            print(d.name + (d.description.isEmpty ? "" : "  (\(d.description))"))
            for s in d.streams {
                if let formats = s.formats {
                    var line = "  \(s.stream): formats \(formats.map(\.rawValue).joined(separator: " "))"
                    if let c = s.channels { line += ", channels \(c.lowerBound)–\(c.upperBound)" }
                    if let r = s.rates { line += ", rates \(r.lowerBound)–\(r.upperBound) Hz" }
                    if let p = s.periods { line += ", period \(p.lowerBound)–\(p.upperBound) frames" }
                    if let e = s.error { line += " — \(e)" }
                    print(line)
                } else {
                    print("  \(s.stream): cannot open: \(s.error ?? "unknown error")")
                }
            }
        }
    }
}
