/*
 * vonage_agora: the two SDK shapes from C.
 *
 *   vonage_agora SOCKET SECONDS
 *
 * Vonage: a custom audio device publishes white noise — 480 mono 16-bit samples every 10 ms,
 * paced by usleep, as the Vonage sample does — through write_capture_data. Agora: an external
 * sink at 16 kHz takes that audio back off the bus through a playback frame observer, and a
 * pull of one 10 ms frame follows at the end. Prints what it saw; exits 0 when the observer
 * heard the noise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stagebox_client.h>

struct heard { int frames; double energy; };

static int on_playback(const int16_t *samples, int samples_per_channel, int channels, int rate,
                       int64_t render_time_ms, void *context) {
    struct heard *h = context;
    (void)rate; (void)render_time_ms;
    for (int i = 0; i < samples_per_channel * channels; i++) h->energy += (double)samples[i] * samples[i];
    h->frames += samples_per_channel;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s SOCKET SECONDS\n", argv[0]); return 2; }
    char error[256];
    stagebox_client *client = stagebox_connect(argv[1], "sdkdemo", error, sizeof error);
    if (!client) { fprintf(stderr, "vonage_agora: %s\n", error); return 1; }

    stagebox_vonage_device *device = stagebox_vonage_create(client, 48000, 1, 48000, 1);
    stagebox_agora *agora = stagebox_agora_create(client);
    if (stagebox_vonage_start_capture(device) != 0 || stagebox_agora_enable_external_audio_sink(agora, 16000, 1) != 0) {
        fprintf(stderr, "vonage_agora: cannot create the ports\n");
        return 1;
    }
    if (stagebox_connect_ports(client, stagebox_vonage_capture_port(device), stagebox_agora_sink_port(agora),
                               error, sizeof error) != 0) {
        fprintf(stderr, "vonage_agora: %s\n", error);
        return 1;
    }
    struct heard heard = {0, 0};
    stagebox_agora_set_playback_observer(agora, on_playback, &heard);

    int16_t noise[480];
    uint32_t x = 1;
    int blocks = atoi(argv[2]) * 100;
    for (int b = 0; b < blocks; b++) {
        for (int i = 0; i < 480; i++) { x = x * 1664525u + 1013904223u; noise[i] = (int16_t)((int32_t)(x >> 16) - 32768) / 4; }
        stagebox_vonage_write_capture_data(device, noise, 480);
        usleep(10000);
    }
    stagebox_agora_set_playback_observer(agora, NULL, NULL);
    int16_t frame[160];
    int pulled = stagebox_agora_pull_playback_audio_frame(agora, frame, sizeof frame);
    double rms = heard.frames ? sqrt(heard.energy / heard.frames) / 32768 : 0;
    printf("observer heard %d frames at 16 kHz, rms %.3f; pull %s\n", heard.frames, rms, pulled == 0 ? "ok" : "failed");
    stagebox_agora_destroy(agora);
    stagebox_vonage_destroy(device);
    stagebox_disconnect(client);
    return heard.frames > 0 && rms > 0.05 ? 0 : 1;
}
