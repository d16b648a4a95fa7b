@testable import StageboxDiagnostics
import Testing

@Suite struct SecretScrubberTests {
    @Test(arguments: [
        ("psk=\"hunter2 with spaces\"", "psk=\"<removed>\""),
        ("  wpa_passphrase=s3cr3t", "  wpa_passphrase=<removed>"),
        ("password: letmein, user: pi", "password: <removed>, user: pi"),
        ("api_token=abc123;next=1", "api_token=<removed>;next=1"),
        ("private_key = 'MIIEvQ'", "private_key = '<removed>'"),
        ("client secret=xyz seen", "client secret=<removed> seen"),
    ])
    func valuesOfSecretKeysAreRemoved(line: String, expected: String) {
        #expect(SecretScrubber.scrubLine(line) == expected)
    }

    @Test(arguments: [
        "a key press on line 3 fired mute",
        "recorder: take 12 repaired (key frames kept)",
        "button hold: long press → mute-out (selected)",
        "keyboard connected",
        "monkey = 3",
        "key frames: 12",
    ])
    func proseWithThoseWordsIsLeftAlone(line: String) {
        #expect(SecretScrubber.scrubLine(line) == line)
    }

    @Test func aPrivateKeyBlockGoesWhole() {
        let lines = ["before", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA", "-----END OPENSSH PRIVATE KEY-----", "after"]
        #expect(SecretScrubber.scrub(lines) == ["before", "<removed: a private key>", "after"])
    }
}
