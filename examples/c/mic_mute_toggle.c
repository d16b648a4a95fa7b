/*
 * mic_mute_toggle: a video-call app's microphone mute as a Stagebox trigger. It makes the trigger
 * CLIENT.mic-mute; whoever fires it (a button on the box, the console, `stagebox trigger`,
 * another client), the app toggles its mute and shows it in the trigger's state: selected while
 * muted, normal while not. A real app would mute its microphone stream where this prints.
 *
 *   mic_mute_toggle SOCKET CLIENT [FIRES]
 *
 * Runs until SIGINT or SIGTERM, or until it has been fired FIRES times; the trigger leaves the
 * bus with it.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stagebox_client.h>

static atomic_int fires;
static volatile sig_atomic_t stop_requested;

static void on_signal(int signal_number) {
    (void)signal_number;
    stop_requested = 1;
}

/* Runs on the client's event thread: set the new state from here. */
static void on_fire(stagebox_trigger *trigger, void *context) {
    (void)context;
    int muted = stagebox_trigger_state(trigger) != STAGEBOX_TRIGGER_SELECTED;
    char error[256];
    if (stagebox_trigger_set_state(trigger, muted ? STAGEBOX_TRIGGER_SELECTED : STAGEBOX_TRIGGER_NORMAL,
                                   error, sizeof error) != 0) {
        fprintf(stderr, "mic_mute_toggle: %s\n", error);
    }
    printf("fired %s: microphone %s\n", stagebox_trigger_name(trigger), muted ? "muted" : "unmuted");
    fflush(stdout);
    atomic_fetch_add(&fires, 1);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s SOCKET CLIENT [FIRES]\n", argv[0]);
        return 2;
    }
    int limit = argc == 4 ? atoi(argv[3]) : 0;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    char error[256];
    stagebox_client *client = stagebox_connect(argv[1], argv[2], error, sizeof error);
    if (!client) { fprintf(stderr, "mic_mute_toggle: %s\n", error); return 1; }
    stagebox_trigger *mute = stagebox_trigger_create(client, "mic-mute", "Mute the microphone", STAGEBOX_TRIGGER_NORMAL,
                                                     on_fire, NULL, error, sizeof error);
    if (!mute) { fprintf(stderr, "mic_mute_toggle: %s\n", error); stagebox_disconnect(client); return 1; }
    printf("ready: %s\n", stagebox_trigger_name(mute));
    fflush(stdout);
    while (!stop_requested && (limit == 0 || atomic_load(&fires) < limit)) usleep(10000);
    stagebox_trigger_remove(mute);
    stagebox_disconnect(client);
    return 0;
}
