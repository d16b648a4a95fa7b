/*
 * send_sequence: puts a known 16-bit stereo sequence on the Stagebox bus through a sender port,
 * paced by the bus, then waits until the bus has taken it all.
 *
 *   send_sequence SOCKET RECEIVER FRAMES
 *
 * The sequence is x = x * 1664525 + 1013904223 (from x = 99), each sample the top 16 bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stagebox_client.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SOCKET RECEIVER FRAMES\n", argv[0]);
        return 2;
    }
    char error[256];
    stagebox_client *client = stagebox_connect(argv[1], "cseq", error, sizeof error);
    if (!client) { fprintf(stderr, "send_sequence: %s\n", error); return 1; }
    stagebox_port *out = stagebox_add_sender(client, "out", 2, 0, error, sizeof error);
    if (!out) { fprintf(stderr, "send_sequence: %s\n", error); return 1; }
    if (stagebox_connect_ports(client, stagebox_port_name(out), argv[2], error, sizeof error) != 0) {
        fprintf(stderr, "send_sequence: %s\n", error);
        return 1;
    }
    /* A new connection fades in over one period: start once it is made and has faded in. */
    for (int i = 0; i < 100 && !stagebox_port_is_connected(out); i++) usleep(10000);
    usleep(20000);
    int frames = atoi(argv[3]);
    int16_t block[480 * 2];
    uint32_t x = 99;
    for (int done = 0; done < frames;) {
        int n = frames - done < 480 ? frames - done : 480;
        for (int i = 0; i < n * 2; i++) {
            x = x * 1664525u + 1013904223u;
            block[i] = (int16_t)(x >> 16);
        }
        stagebox_wait_space(out, n, 2000);
        stagebox_send_int16(out, block, n);
        done += n;
    }
    stagebox_drain(out, 5000);
    stagebox_port_stats stats;
    stagebox_port_get_stats(out, &stats);
    printf("sent %d frames as %s (underruns %lld, overruns %lld)\n", frames, stagebox_port_name(out),
           (long long)stats.underruns, (long long)stats.overruns);
    stagebox_port_remove(out);
    stagebox_disconnect(client);
    return 0;
}
