/*
 * sine_sender: a tone onto the Stagebox bus, one period at a time, the way a JACK client's
 * process callback works: wait until the bus has room for a period, then write it.
 *
 *   sine_sender SOCKET CLIENT RECEIVER [FREQUENCY]
 *
 * Makes the sender port CLIENT.out (2 channels, the bus's rate and period), connects it to
 * RECEIVER (for example codec.out) and sends until interrupted (SIGINT or SIGTERM).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stagebox_client.h>

static volatile sig_atomic_t stopping = 0;
static void stop(int signal) { (void)signal; stopping = 1; }

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s SOCKET CLIENT RECEIVER [FREQUENCY]\n", argv[0]);
        return 2;
    }
    double frequency = argc == 5 ? atof(argv[4]) : 440.0;
    char error[256];
    stagebox_client *client = stagebox_connect(argv[1], argv[2], error, sizeof error);
    if (!client) { fprintf(stderr, "sine_sender: %s\n", error); return 1; }
    stagebox_port *out = stagebox_add_sender(client, "out", 2, 0, error, sizeof error);
    if (!out || stagebox_connect_ports(client, stagebox_port_name(out), argv[3], error, sizeof error) != 0) {
        fprintf(stderr, "sine_sender: %s\n", error);
        return 1;
    }
    signal(SIGINT, stop);
    signal(SIGTERM, stop);
    int rate = stagebox_bus_sample_rate(client), period = stagebox_bus_period(client);
    float *block = malloc(sizeof(float) * 2 * (size_t)period);
    double phase = 0, step = 2 * M_PI * frequency / rate;
    while (!stopping) {
        if (!stagebox_wait_space(out, period, 100)) continue;
        for (int i = 0; i < period; i++) {
            float v = (float)(0.1 * sin(phase));
            block[2 * i] = block[2 * i + 1] = v;
            phase += step;
            if (phase > 2 * M_PI) phase -= 2 * M_PI;
        }
        stagebox_send_float(out, block, period);
    }
    stagebox_port_stats stats;
    stagebox_port_get_stats(out, &stats);
    printf("%s: underruns %lld\n", stagebox_port_name(out), (long long)stats.underruns);
    free(block);
    stagebox_port_remove(out);
    stagebox_disconnect(client);
    return 0;
}
