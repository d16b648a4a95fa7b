import CALSA

/// An ALSA configuration tree built from text, to open PCMs that are defined there
/// (`snd_pcm_open_lconf`) instead of in the global configuration: no global state,
/// so tests can run in parallel.
// @unchecked: the tree is built in init and only read after (alsa-lib reads it while opening a
// PCM, never changes it); it is freed in deinit.
public final class ALSAConfigText: @unchecked Sendable {
    let tree: OpaquePointer

    public init(_ text: String) throws(ALSAError) {
        var top: OpaquePointer?
        var rc = snd_config_top(&top)
        guard rc == 0, let top else { throw .call(device: "(config)", what: "snd_config_top", code: rc) }
        var input: OpaquePointer?
        rc = text.withCString { snd_input_buffer_open(&input, $0, text.utf8.count) }
        guard rc == 0, let input else {
            snd_config_delete(top)
            throw .call(device: "(config)", what: "snd_input_buffer_open", code: rc)
        }
        rc = snd_config_load(top, input)
        snd_input_close(input)
        guard rc == 0 else {
            snd_config_delete(top)
            throw .call(device: "(config)", what: "snd_config_load", code: rc)
        }
        tree = top
    }

    deinit { snd_config_delete(tree) }
}
