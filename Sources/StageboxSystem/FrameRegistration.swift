/// Where the static aarch64 build's start-up code registers the binary's unwind tables: nowhere.
///
/// A static program's start-up code (GCC's crtbeginT.o) hands the binary's `.eh_frame` to
/// libgcc's unwinder (`__register_frame_info`). From GCC 13 on, libgcc's lock-free registration
/// reads every frame description there at once to learn the code range they cover
/// (`get_pc_range` in `unwind-dw2-fde.c`): at every start the whole section, 1.7 MiB in the
/// aarch64 binary, is read, and each client keeps it resident. `tools/build-static` points
/// that call and its counterpart at exit here (lld's `--defsym`) for the aarch64 build, whose
/// libgcc is trixie's GCC 14; bookworm's GCC 12 on x86_64 registers lazily and is left alone.
///
/// Unwinding still works: with nothing registered, libgcc finds a frame through the program
/// header's `PT_GNU_EH_FRAME` (`dl_iterate_phdr`, which static glibc has) and the sorted
/// index `.eh_frame_hdr`, reading a few pages (`tools/cross/test` checks a throw and a
/// backtrace in a static aarch64 program linked the same way).
///
/// Returns nothing registered: `__deregister_frame_info`'s "no object" (libgcc's would assert
/// on a table it never saw).
@_cdecl("stagebox_skip_frame_registration")
public func skipFrameRegistration(_ begin: UnsafeRawPointer?, _ object: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    nil
}
