/*
 * jack_bench_client: the JACK side of tools/bench, written against libjack, so that jackd and
 * PipeWire (through pw-jack) run the same clients as each other.
 *
 *   jack_bench_client sine NAME PORT...     2 outputs, a tone, connected to PORT... in order
 *   jack_bench_client thru NAME             2 inputs copied to 2 outputs (a filter in the path)
 *   jack_bench_client watch NAME            counts xruns and samples the DSP load
 *
 * Each runs until SIGINT or SIGTERM; `watch` then prints "xruns=N dsp-load-max=L dsp-load-mean=M".
 * Connections other than a sender's are made by the caller with jack_connect.
 */
#include <jack/jack.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;
static void stop(int signal) { (void)signal; stopping = 1; }

static jack_port_t *in[2], *out[2];
static double phase, step;
static volatile int xruns;

static int sine(jack_nframes_t frames, void *arg) {
    (void)arg;
    float *l = jack_port_get_buffer(out[0], frames), *r = jack_port_get_buffer(out[1], frames);
    for (jack_nframes_t i = 0; i < frames; i++) {
        l[i] = r[i] = (float)(0.1 * sin(phase));
        phase += step;
        if (phase > 2 * M_PI) phase -= 2 * M_PI;
    }
    return 0;
}

static int thru(jack_nframes_t frames, void *arg) {
    (void)arg;
    for (int c = 0; c < 2; c++)
        memcpy(jack_port_get_buffer(out[c], frames), jack_port_get_buffer(in[c], frames), sizeof(float) * frames);
    return 0;
}

static int xrun(void *arg) { (void)arg; xruns++; return 0; }

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s sine|thru|watch NAME [PORT...]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    jack_client_t *client = jack_client_open(argv[2], JackNoStartServer, NULL);
    if (!client) { fprintf(stderr, "jack_bench_client: no JACK server\n"); return 1; }
    char name[32];
    for (int c = 0; c < 2; c++) {
        snprintf(name, sizeof name, "out_%d", c + 1);
        if (strcmp(mode, "watch") != 0) out[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
        snprintf(name, sizeof name, "in_%d", c + 1);
        if (strcmp(mode, "thru") == 0) in[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    }
    if (strcmp(mode, "sine") == 0) {
        step = 2 * M_PI * 440.0 / jack_get_sample_rate(client);
        jack_set_process_callback(client, sine, NULL);
    } else if (strcmp(mode, "thru") == 0) {
        jack_set_process_callback(client, thru, NULL);
    } else if (strcmp(mode, "watch") == 0) {
        jack_set_xrun_callback(client, xrun, NULL);
    } else {
        fprintf(stderr, "jack_bench_client: unknown mode %s\n", mode);
        return 2;
    }
    signal(SIGINT, stop);
    signal(SIGTERM, stop);
    if (jack_activate(client) != 0) { fprintf(stderr, "jack_bench_client: cannot activate\n"); return 1; }
    for (int i = 3; i < argc && strcmp(mode, "sine") == 0; i++)
        jack_connect(client, jack_port_name(out[(i - 3) % 2]), argv[i]);
    printf("ready\n");
    fflush(stdout);
    double loadMax = 0, loadSum = 0;
    long samples = 0;
    while (!stopping) {
        usleep(strcmp(mode, "watch") == 0 ? 250000 : 1000000);
        if (strcmp(mode, "watch") == 0) {
            double load = jack_cpu_load(client);
            if (load > loadMax) loadMax = load;
            loadSum += load;
            samples++;
        }
    }
    if (strcmp(mode, "watch") == 0)
        printf("xruns=%d dsp-load-max=%.2f dsp-load-mean=%.2f\n", xruns, loadMax, samples ? loadSum / samples : 0.0);
    jack_client_close(client);
    return 0;
}
