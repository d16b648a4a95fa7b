import CLinux
import StageboxConsole
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct SerialPortTests {
    @Test func aMissingDeviceIsNamedWithTheReasonInWords() {
        let path = "/dev/ttyStagebox\(getpid())"
        do {
            _ = try SerialPort(path: path)
            Issue.record("\(path) opened")
        } catch {
            #expect(error.description == "opening the serial port \(path): No such file or directory")
        }
    }

    @Test func aFileThatIsNotATerminalIsRefused() {
        do {
            _ = try SerialPort(path: "/dev/null")
            Issue.record("/dev/null taken as a serial port")
        } catch {
            #expect(error.errno == .inappropriateIOCTLForDevice)
            #expect(error.description.contains("/dev/null"))
        }
    }

    @Test func aTerminalCarriesTextBothWays() throws {
        let master = posix_openpt(O_RDWR | O_NOCTTY)
        #expect(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0)
        defer { close(master) }
        let port = try SerialPort(path: String(cString: ptsname(master)))
        port.write("hello")
        var buffer = [UInt8](repeating: 0, count: 16)
        var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 2000) == 1)
        let n = read(master, &buffer, buffer.count)
        #expect(n == 5 && String(decoding: buffer[0..<5], as: UTF8.self) == "hello")
        #expect(write(master, "ok", 2) == 2)
        #expect(port.read(timeoutMs: 2000) == Array("ok".utf8))
    }
}
