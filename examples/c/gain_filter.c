/*
 * gain_filter: an effect in the bus's signal path. Stagebox calls the filter's function every
 * period, on the port's own thread, with the period in place; here it scales it.
 *
 *   gain_filter SOCKET CLIENT GAIN_DB
 *
 * Makes the filter port CLIENT.fx (2 channels) and runs until interrupted (SIGINT or SIGTERM).
 * Put it in a path with `stagebox connect`: codec.in → CLIENT.fx → codec.out.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stagebox_client.h>

static volatile sig_atomic_t stopping = 0;
static void stop(int signal) { (void)signal; stopping = 1; }

static void scale(float *samples, int frames, int channels, void *context) {
    float gain = *(const float *)context;
    for (int i = 0; i < frames * channels; i++) samples[i] *= gain;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SOCKET CLIENT GAIN_DB\n", argv[0]);
        return 2;
    }
    static float gain;
    gain = (float)pow(10.0, atof(argv[3]) / 20.0);
    char error[256];
    stagebox_client *client = stagebox_connect(argv[1], argv[2], error, sizeof error);
    if (!client) { fprintf(stderr, "gain_filter: %s\n", error); return 1; }
    stagebox_port *fx = stagebox_add_filter(client, "fx", 2, scale, &gain, error, sizeof error);
    if (!fx) { fprintf(stderr, "gain_filter: %s\n", error); return 1; }
    signal(SIGINT, stop);
    signal(SIGTERM, stop);
    printf("%s ready\n", stagebox_port_name(fx));
    fflush(stdout);
    while (!stopping) sleep(1); /* a signal ends the sleep at once */
    stagebox_port_remove(fx);
    stagebox_disconnect(client);
    return 0;
}
