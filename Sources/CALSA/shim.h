#ifndef STAGEBOX_CALSA_SHIM_H
#define STAGEBOX_CALSA_SHIM_H
#include <alsa/asoundlib.h>

/* alsa-lib's error handler is variadic, which Swift imports as an opaque
   pointer. These helpers install a handler from C instead. */
static void stagebox_alsa_silent_handler(const char *file, int line, const char *function,
                                         int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/* Silences alsa-lib's own messages on stderr: Stagebox reports errors itself. */
static inline int stagebox_alsa_silence_errors(void) {
    return snd_lib_error_set_handler(stagebox_alsa_silent_handler);
}

/* Restores alsa-lib's default handler, which prints to stderr. */
static inline int stagebox_alsa_default_errors(void) {
    return snd_lib_error_set_handler(NULL);
}
#endif
