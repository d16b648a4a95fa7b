import ArgumentParser
import StageboxConsole
import StageboxControls
import StageboxWatchdog
import StageboxSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Small tools that exercise one device each: used on the bench and by the VM rig's scenarios.
struct DiagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diag",
        abstract: "A support bundle; or exercise one device: a GPIO line, the watchdog, a serial port.",
        subcommands: [DiagBundle.self, GPIOWaitEdge.self, GPIOSet.self, WatchdogDiag.self, SerialEcho.self])

    struct GPIOWaitEdge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gpio-wait-edge", abstract: "Wait for an edge on an input line; print it.")
        @Argument(help: "The GPIO chip: a name (gpiochip0), a path, a label or a number.") var chip: String
        @Argument(help: "The line's offset on the chip.") var line: Int
        @Option(help: "Give up after this many seconds (exit 2).") var timeout: Double = 10
        @Flag(help: "Print READY once the line is requested (for scripts that then make the edge).") var ready = false

        func validate() throws {
            guard (0...Int(UInt32.max)).contains(line) else { throw ValidationError("line must be from 0 to \(UInt32.max), not \(line)") }
            guard timeout > 0 && timeout <= 86400 else {
                throw ValidationError("--timeout must be more than 0 and at most 86400 seconds, not \(timeout)")
            }
        }

        func run() throws {
            let edge: GPIOLine.Edge?
            do throws(GPIOError) {
                let gpio = try GPIOLine(chip: chip, offset: line)
                try gpio.watchEdges(consumer: "stagebox")
                if ready { print("READY"); fflush(nil) }
                edge = try gpio.waitForEdge(timeoutNanos: Int64(timeout * 1e9))
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            guard let edge else {
                printError("no edge on \(chip) line \(line) within \(timeout) s")
                throw ExitCode(2)
            }
            print(edge == .rising ? "rising" : "falling")
        }
    }

    struct GPIOSet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gpio-set", abstract: "Drive an output line (an LED) and hold it.")
        @Argument(help: "The GPIO chip: a name (gpiochip0), a path, a label or a number.") var chip: String
        @Argument(help: "The line's offset on the chip.") var line: Int
        @Argument(help: "0 or 1.") var value: Int
        @Option(help: "Hold the line this many seconds before releasing it (at most 3600).") var hold: Double = 1

        func validate() throws {
            guard value == 0 || value == 1 else { throw ValidationError("value must be 0 or 1, not \(value)") }
            guard hold >= 0 && hold <= 3600 else { throw ValidationError("--hold must be from 0 to 3600 seconds, not \(hold)") }
            guard (0...Int(UInt32.max)).contains(line) else { throw ValidationError("line must be from 0 to \(UInt32.max), not \(line)") }
        }

        func run() throws {
            do throws(GPIOError) {
                let gpio = try GPIOLine(chip: chip, offset: line)
                try gpio.drive(consumer: "stagebox", value: value == 1)
                print("set \(chip) line \(line) to \(value)")
                fflush(nil)
                usleep(UInt32(hold * 1_000_000))
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }
    }

    struct WatchdogDiag: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watchdog", abstract: "Open the watchdog, feed it, then stop feeding or disarm it.")
        @Option(help: "The watchdog device.") var device = "/dev/watchdog"
        @Option(help: "Feed it every second for this many seconds.") var feed: Double = 2
        @Option(help: "Then: 'hang' (stop feeding, keep it open) or 'disarm' (magic close).") var then = "disarm"

        func validate() throws {
            guard then == "hang" || then == "disarm" else { throw ValidationError("--then must be hang or disarm, not '\(then)'") }
            guard feed >= 0 else { throw ValidationError("--feed must be 0 or more seconds, not \(feed)") }
        }

        func run() throws {
            let dog: Watchdog
            do { dog = try Watchdog(path: device) } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            let end = monotonicNanoseconds() + Int64(feed * 1e9)
            while true {
                let left = end - monotonicNanoseconds()
                if left <= 0 { break }
                dog.feed()
                usleep(UInt32(min(1_000_000_000, left) / 1000))
            }
            if then == "disarm" {
                dog.disarm()
                print("watchdog disarmed")
            } else {
                print("watchdog no longer fed")
                fflush(nil)
                while true { sleep(60) }
            }
        }
    }

    struct SerialEcho: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serial-echo", abstract: "Answer each line on a serial port with 'pong LINE'.")
        @Argument(help: "The serial device.") var device: String
        @Option(help: "The line speed: 9600, 19200, 38400, 57600, 115200, 230400, 460800 or 921600.") var baud = 115_200
        @Option(help: "Answer this many lines, then exit (0: forever).") var lines = 0

        func validate() throws {
            if SerialPort.baudRates[baud] == nil {
                let rates = SerialPort.baudRates.keys.sorted().map(String.init).joined(separator: ", ")
                throw ValidationError("--baud must be one of \(rates), not \(baud)")
            }
            if lines < 0 { throw ValidationError("--lines must be 0 (forever) or more, not \(lines)") }
        }

        func run() throws {
            let port: SerialPort
            do { port = try SerialPort(path: device, baud: baud) } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            var pending: [UInt8] = []
            var answered = 0
            while lines == 0 || answered < lines {
                pending += port.read(timeoutMs: 1000)
                while let nl = pending.firstIndex(where: { $0 == 10 || $0 == 13 }) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    if line.isEmpty { continue }
                    port.write("pong \(line)\r\n")
                    answered += 1
                }
            }
        }
    }
}
