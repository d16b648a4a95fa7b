import ArgumentParser
import StageboxClient
import StageboxPortRules
import StageboxTriggers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

struct TriggerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger", abstract: "Fire a trigger by name, or make one of your own with --create.",
        discussion: """
            Firing a disabled trigger does nothing: it prints "stagebox: trigger NAME is disabled" on \
            standard error and exits 1; so does a trigger whose action failed (the log says why), \
            and one that only shows a state on an LED (update).

            With --create, NAME is CLIENT.TRIGGER: stagebox connects as CLIENT and makes the \
            trigger, prints "fired CLIENT.TRIGGER" on a line of its own each time it is fired (by \
            a button, the console, a client or `stagebox trigger CLIENT.TRIGGER`), and toggles its \
            state between normal and selected on each fire. It runs until SIGINT or SIGTERM (exit \
            0) or until stagebox goes away (exit 1); the trigger leaves the bus with it.
            """)
    @OptionGroup var bus: BusOptions
    @Flag(help: "Make the trigger NAME (CLIENT.TRIGGER) and print its fires, instead of firing it.") var create = false
    @Option(help: "With --create: the trigger's title (at most \(TriggerRules.maxTitleLength) bytes).") var title: String?
    @Argument(help: "The trigger, for example mute (`stagebox console --execute triggers` lists them); with --create, CLIENT.TRIGGER.")
    var name: String

    func validate() throws {
        if title != nil && !create { throw ValidationError("--title needs --create") }
        if create { _ = try split() }
    }

    func run() throws {
        guard create else {
            return try bus.request(as: "trigger") { client throws(BusClientError) in try client.fireTrigger(name) }
        }
        let (clientName, triggerName) = try split()
        StopSignals.install()
        let client = try bus.connect(as: clientName)
        defer { client.close() }
        let trigger = try busRequest { () throws(BusClientError) in
            try client.createTrigger(name: triggerName, title: title ?? "", state: .normal) { trigger in
                print("fired \(trigger.name)")
                fflush(nil)
                do throws(BusClientError) {
                    try trigger.setState(trigger.state == .selected ? .normal : .selected)
                } catch {
                    printError("stagebox: \(error)")
                }
            }
        }
        printError("stagebox: made trigger \(trigger.name); its fires are printed until interrupted")
        while !StopSignals.stopRequested {
            if let lost = client.connection.lostReason {
                printError("stagebox: \(lost); trigger \(trigger.name) is gone with it")
                throw ExitCode(1)
            }
            usleep(20_000)
        }
        try? trigger.remove()
    }

    /// NAME as CLIENT.TRIGGER, or a usage error naming what is wrong.
    private func split() throws -> (client: String, trigger: String) {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            throw ValidationError("--create needs NAME as CLIENT.TRIGGER (for example call.mic-mute), not '\(name)'")
        }
        do throws(PortRuleViolation) {
            try PortRules.checkClientName(parts[0])
        } catch {
            throw ValidationError("\(error)")
        }
        do throws(TriggerRuleViolation) {
            try TriggerRules.checkClientTriggerName(parts[1], client: parts[0])
            if let title { try TriggerRules.checkTitle(title, trigger: name) }
        } catch {
            throw ValidationError("\(error)")
        }
        return (parts[0], parts[1])
    }
}
