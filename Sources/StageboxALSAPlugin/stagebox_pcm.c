/*
 * stagebox_pcm.c — the ALSA PCM plugin `type stagebox`: every ALSA program can play to and
 * record from the Stagebox bus (libasound_module_pcm_stagebox.so, built on alsa-lib's ioplug).
 *
 *   pcm.stagebox { @args [ NAME SINK SOURCE SOCKET ] … type stagebox name $NAME sink $SINK … }
 *
 * The program gets a port of its own on the bus: a sender "NAME.out" connected to SINK (default
 * codec.out) for playback, a receiver "NAME.in" that SOURCE (default codec.in) is connected to
 * for capture. NAME defaults to "<program>-<pid>"; "none" as SINK or SOURCE connects nothing.
 *
 * How it runs: the ioplug keeps the program's buffer (pseudo mmap). A thread of the plugin acts
 * as the "hardware": woken by the bus after each of its periods, it moves frames between that
 * buffer and the port, keeping only a few bus periods in the port's ring, and advances the
 * hardware pointer. So the program is paced by the bus, pause stops within those few periods,
 * and `delay` is the buffer's frames plus the ring's. The thread wakes the
 * program through an eventfd only when its avail_min is reached (no busy loop).
 *
 * All port calls happen on that thread (a port belongs to one thread); the program's thread only
 * reads the atomics it publishes. A bus that goes away makes the stream an xrun (-EPIPE), and
 * snd_pcm_prepare (what snd_pcm_recover does) connects again, waiting up to 3 s for the bus.
 */
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "stagebox_client.h"

#define CHUNK_FRAMES 1024       /* conversion scratch, in frames */
#define RING_BLOCKS 3           /* bus periods (in the program's frames) kept in the port's ring, */
#define RING_MS 20              /* or up to this much of the program's period, if that is longer */
#define RECONNECT_MS 3000       /* how long prepare waits for a bus that went away to come back */
#define THREAD_PRIORITY 60      /* SCHED_FIFO of the plugin's thread, where allowed (stagebox's: 70) */

typedef struct {
    snd_pcm_ioplug_t io;
    char *socket, *name, *link;
    stagebox_client *client;
    stagebox_port *port;
    int bus_rate, bus_period;
    unsigned int rate, channels;
    snd_pcm_uframes_t block;     /* one bus period in the program's frames, rounded up */
    snd_pcm_uframes_t boundary, avail_min, stop_threshold;
    int notify;                  /* eventfd the program polls: readable while avail >= avail_min */
    int stop;                    /* eventfd that ends the thread */
    pthread_t thread;
    int has_thread;
    int default_name;            /* NAME was not given: "<program>-<pid>" */
    atomic_int primed;           /* capture: the port has its cushion */
    atomic_uint_fast64_t hw;     /* frames moved since prepare (never wraps) */
    atomic_int running;          /* started and not paused */
    atomic_int moving;           /* the thread is between its `running` check and the pointer's advance */
    atomic_int xrun;             /* an underrun, overrun or a lost bus: pointer says -EPIPE */
    atomic_int lost;
    atomic_int drain_asked, drained;
    atomic_int pending;          /* the ring's frames, as the thread last saw them */
    float scratch[CHUNK_FRAMES * 8];
    char error[256];
} sb_pcm;

static void notify(sb_pcm *p) { eventfd_write(p->notify, 1); }

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Stops the hardware pointer and returns only once it stands: a move that had already seen
 * `running` finishes first (without this, pause could return and the pointer still advance by
 * one bus period). Sequentially consistent on both sides (the thread sets `moving`, then reads
 * `running`; here the reverse), so one of the two always sees the other. A move takes
 * microseconds; the wait gives up after 100 ms so a stuck thread cannot hang the program. */
static void halt(sb_pcm *p) {
    atomic_store(&p->running, 0);
    int64_t give_up = now_ms() + 100;
    while (atomic_load(&p->moving) && now_ms() < give_up) sched_yield();
}

static snd_pcm_uframes_t appl_ptr(sb_pcm *p) { return __atomic_load_n(&p->io.appl_ptr, __ATOMIC_ACQUIRE); }

/* Frames in the program's buffer: written and not yet moved (playback), or moved and not yet
 * read (capture). */
static snd_pcm_uframes_t buffered(sb_pcm *p) {
    snd_pcm_uframes_t boundary = __atomic_load_n(&p->boundary, __ATOMIC_RELAXED); /* sw_params may set it */
    snd_pcm_uframes_t hw = (snd_pcm_uframes_t)(atomic_load(&p->hw) % boundary), appl = appl_ptr(p);
    if (p->io.stream == SND_PCM_STREAM_PLAYBACK) return (appl + boundary - hw) % boundary;
    return (hw + boundary - appl) % boundary;
}

static snd_pcm_uframes_t avail(sb_pcm *p) {
    snd_pcm_uframes_t b = buffered(p);
    return p->io.stream == SND_PCM_STREAM_PLAYBACK ? p->io.buffer_size - b : b;
}

/* --- samples between the program's buffer and floats ------------------------------------- */

static void *sample_at(const snd_pcm_channel_area_t *a, snd_pcm_uframes_t frame) {
    return (char *)a->addr + (a->first + frame * a->step) / 8;
}

static void to_float(sb_pcm *p, const snd_pcm_channel_area_t *areas, snd_pcm_uframes_t at, snd_pcm_uframes_t n, float *out) {
    for (unsigned c = 0; c < p->channels; c++)
        for (snd_pcm_uframes_t i = 0; i < n; i++) {
            const void *s = sample_at(&areas[c], at + i);
            float x;
            switch (p->io.format) {
            case SND_PCM_FORMAT_U8: x = ((int)*(const uint8_t *)s - 128) * (1.0f / 128); break;
            case SND_PCM_FORMAT_S16_LE: x = *(const int16_t *)s * (1.0f / 32768); break;
            case SND_PCM_FORMAT_S24_3LE: {
                const uint8_t *b = s;
                x = (float)((int32_t)((uint32_t)b[0] << 8 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 24) >> 8) * (1.0f / 8388608);
                break;
            }
            case SND_PCM_FORMAT_S24_LE: x = (float)((int32_t)((uint32_t)*(const int32_t *)s << 8) >> 8) * (1.0f / 8388608); break;
            case SND_PCM_FORMAT_S32_LE: x = (float)*(const int32_t *)s * (1.0f / 2147483648.0f); break;
            default: x = *(const float *)s; break;
            }
            out[i * p->channels + c] = x;
        }
}

static int32_t clamp_scaled(float x, double scale, int32_t lo, int32_t hi) {
    double v = (double)x * scale;
    v = v < 0 ? v - 0.5 : v + 0.5;
    if (v != v) return 0;
    return v <= lo ? lo : v >= hi ? hi : (int32_t)v;
}

static void from_float(sb_pcm *p, const float *in, const snd_pcm_channel_area_t *areas, snd_pcm_uframes_t at, snd_pcm_uframes_t n) {
    for (unsigned c = 0; c < p->channels; c++)
        for (snd_pcm_uframes_t i = 0; i < n; i++) {
            void *d = sample_at(&areas[c], at + i);
            float x = in[i * p->channels + c];
            switch (p->io.format) {
            case SND_PCM_FORMAT_U8: *(uint8_t *)d = (uint8_t)(clamp_scaled(x, 128, -128, 127) + 128); break;
            case SND_PCM_FORMAT_S16_LE: *(int16_t *)d = (int16_t)clamp_scaled(x, 32768, -32768, 32767); break;
            case SND_PCM_FORMAT_S24_3LE: {
                int32_t v = clamp_scaled(x, 8388608, -8388608, 8388607);
                uint8_t *b = d;
                b[0] = (uint8_t)v;
                b[1] = (uint8_t)(v >> 8);
                b[2] = (uint8_t)(v >> 16);
                break;
            }
            case SND_PCM_FORMAT_S24_LE: *(int32_t *)d = clamp_scaled(x, 8388608, -8388608, 8388607); break;
            case SND_PCM_FORMAT_S32_LE: *(int32_t *)d = clamp_scaled(x, 2147483648.0, INT32_MIN, INT32_MAX); break;
            default: *(float *)d = x; break;
            }
        }
}

/* --- the thread that plays the hardware ---------------------------------------------------- */

/* How many frames the playback thread keeps in the port's ring: a few bus periods, more for a
 * program whose own period says it can take more latency (the cushion against this thread being
 * scheduled late: it is not a real-time thread). */
static int ring_target(sb_pcm *p) {
    snd_pcm_uframes_t target = RING_BLOCKS * p->block, most = (snd_pcm_uframes_t)p->rate * RING_MS / 1000;
    snd_pcm_uframes_t wanted = p->io.period_size < most ? p->io.period_size : most;
    return (int)(wanted > target ? wanted : target);
}

/* Playback: keeps ring_target frames in the ring from the program's buffer, one block per send
 * (the bus starts taking a port once two of its blocks wait). */
static void move_playback(sb_pcm *p) {
    const snd_pcm_channel_area_t *areas = snd_pcm_ioplug_mmap_areas(&p->io);
    int pending = stagebox_port_pending(p->port), target = ring_target(p);
    snd_pcm_uframes_t queued = buffered(p);
    while (queued > 0 && pending < target) {
        snd_pcm_uframes_t n = queued < p->block ? queued : p->block;
        if (n > CHUNK_FRAMES) n = CHUNK_FRAMES;
        snd_pcm_uframes_t at = (snd_pcm_uframes_t)(atomic_load(&p->hw) % p->io.buffer_size);
        if (at + n > p->io.buffer_size) n = p->io.buffer_size - at; /* up to the buffer's end */
        to_float(p, areas, at, n, p->scratch);
        stagebox_send_float(p->port, p->scratch, (int)n);
        atomic_fetch_add(&p->hw, n);
        queued -= n;
        pending = stagebox_port_pending(p->port);
    }
    atomic_store(&p->pending, pending);
    if (queued == 0 && atomic_load(&p->drain_asked) && !atomic_load(&p->drained)) {
        stagebox_drain(p->port, 2000); /* the bus takes the last frames at once */
        atomic_store(&p->drained, 1);
        notify(p);
        return;
    }
    /* An underrun: the program gave nothing and the bus has taken everything. */
    if (queued == 0 && pending == 0 && !atomic_load(&p->drain_asked) && p->io.buffer_size >= __atomic_load_n(&p->stop_threshold, __ATOMIC_RELAXED)) {
        atomic_store(&p->xrun, 1);
        atomic_store(&p->running, 0);
    }
}

/* Capture: moves whole blocks the bus has delivered into the program's buffer. The port starts
 * (and restarts after a gap) only with a cushion of four blocks waiting, as its library does:
 * asked earlier, it would hand out silence without taking anything. */
static void move_capture(sb_pcm *p) {
    const snd_pcm_channel_area_t *areas = snd_pcm_ioplug_mmap_areas(&p->io);
    int pending = stagebox_port_pending(p->port);
    if (!atomic_load(&p->primed) && pending < (int)(4 * p->block)) return;
    atomic_store(&p->primed, 1);
    while (pending >= (int)p->block) {
        snd_pcm_uframes_t have = buffered(p);
        if (have >= __atomic_load_n(&p->stop_threshold, __ATOMIC_RELAXED) || have + p->block > p->io.buffer_size) { /* the program does not read */
            atomic_store(&p->xrun, 1);
            atomic_store(&p->running, 0);
            break;
        }
        snd_pcm_uframes_t n = p->block > CHUNK_FRAMES ? CHUNK_FRAMES : p->block;
        int whole = stagebox_receive_float(p->port, p->scratch, (int)n);
        snd_pcm_uframes_t at = (snd_pcm_uframes_t)(atomic_load(&p->hw) % p->io.buffer_size);
        snd_pcm_uframes_t first = at + n > p->io.buffer_size ? p->io.buffer_size - at : n;
        from_float(p, p->scratch, areas, at, first);
        if (first < n) from_float(p, p->scratch + first * p->channels, areas, 0, n - first);
        atomic_fetch_add(&p->hw, n);
        if (whole != 1) { atomic_store(&p->primed, 0); break; }
        pending = stagebox_port_pending(p->port);
    }
    atomic_store(&p->pending, stagebox_port_pending(p->port));
}

static void *hardware_thread(void *arg) {
    sb_pcm *p = arg;
    int port_fd = stagebox_port_descriptor(p->port);
    for (;;) {
        struct pollfd fds[2] = {{.fd = p->stop, .events = POLLIN}, {.fd = port_fd, .events = POLLIN}};
        int lost = atomic_load(&p->lost);
        poll(fds, lost ? 1 : 2, 100);
        if (fds[0].revents) break;
        if (lost) continue;
        if ((fds[1].revents & (POLLHUP | POLLERR)) || stagebox_connection_lost(p->client, NULL, 0)) {
            atomic_store(&p->lost, 1);
            atomic_store(&p->xrun, 1);
            atomic_store(&p->running, 0);
            notify(p);
            continue;
        }
        stagebox_port_take_wakeups(p->port);
        atomic_store(&p->moving, 1);
        if (!atomic_load(&p->running)) { atomic_store(&p->moving, 0); continue; }
        if (p->io.stream == SND_PCM_STREAM_PLAYBACK) move_playback(p);
        else move_capture(p);
        atomic_store(&p->moving, 0);
        if (atomic_load(&p->xrun) || avail(p) >= __atomic_load_n(&p->avail_min, __ATOMIC_RELAXED)) notify(p);
    }
    return NULL;
}

static void stop_thread(sb_pcm *p) {
    if (!p->has_thread) return;
    eventfd_write(p->stop, 1);
    pthread_join(p->thread, NULL);
    eventfd_t drop;
    eventfd_read(p->stop, &drop);
    p->has_thread = 0;
}

/* --- the port ---------------------------------------------------------------------------- */

static void drop_port(sb_pcm *p) {
    stop_thread(p);
    if (p->port) stagebox_port_remove(p->port);
    p->port = NULL;
}

static int connect_bus(sb_pcm *p) {
    p->client = stagebox_connect(p->socket, p->name, p->error, sizeof p->error);
    /* A program that opens the bus twice under its default name (playback and capture) gets
     * "<program>-<pid>-2" and so on for the second. */
    for (int n = 2; !p->client && p->default_name && n <= 16 && strstr(p->error, "already connected"); n++) {
        char *base = strdup(p->name), *dash = strrchr(base, '-');
        if (n > 2 && dash) *dash = 0;
        snprintf(p->name, 48, "%s-%d", base, n);
        free(base);
        p->client = stagebox_connect(p->socket, p->name, p->error, sizeof p->error);
    }
    if (!p->client) return -ECONNREFUSED;
    p->bus_rate = stagebox_bus_sample_rate(p->client);
    p->bus_period = stagebox_bus_period(p->client);
    atomic_store(&p->lost, 0);
    return 0;
}

static int make_port(sb_pcm *p) {
    int playback = p->io.stream == SND_PCM_STREAM_PLAYBACK;
    p->port = playback ? stagebox_add_sender(p->client, "out", (int)p->channels, (int)p->rate, p->error, sizeof p->error)
                       : stagebox_add_receiver(p->client, "in", (int)p->channels, (int)p->rate, p->error, sizeof p->error);
    if (!p->port) {
        SNDERR("stagebox: cannot add a port for %s: %s", p->name, p->error);
        return -EINVAL;
    }
    if (strcmp(p->link, "none") != 0) {
        const char *me = stagebox_port_name(p->port);
        int rc = playback ? stagebox_connect_ports(p->client, me, p->link, p->error, sizeof p->error)
                          : stagebox_connect_ports(p->client, p->link, me, p->error, sizeof p->error);
        /* Already connected is what was asked (a restored state may have made it first). */
        if (rc < 0 && !strstr(p->error, "already connected")) {
            SNDERR("stagebox: cannot connect %s %s %s: %s", me, playback ? "to" : "from", p->link, p->error);
            drop_port(p);
            return -ENOENT;
        }
    }
    p->block = ((snd_pcm_uframes_t)p->bus_period * p->rate + (unsigned)p->bus_rate - 1) / (unsigned)p->bus_rate;
    if (p->block < 1) p->block = 1;
    if (pthread_create(&p->thread, NULL, hardware_thread, p) != 0) {
        SNDERR("stagebox: cannot start the plugin's thread");
        drop_port(p);
        return -ENOMEM;
    }
    p->has_thread = 1;
    /* Real-time where the program may (root, or RLIMIT_RTPRIO), below stagebox's audio thread, as
     * a JACK client's thread runs below jackd's: the ring holds only a few periods. Else it stays
     * at the program's own priority. */
    struct sched_param realtime = {.sched_priority = THREAD_PRIORITY};
    pthread_setschedparam(p->thread, SCHED_FIFO, &realtime);
    return 0;
}

/* --- ioplug callbacks -------------------------------------------------------------------- */

static int sb_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params) {
    sb_pcm *p = io->private_data;
    (void)params;
    drop_port(p);
    p->rate = io->rate;
    p->channels = io->channels;
    /* alsa-lib's own boundary for this buffer, until sw_params tells it. */
    p->boundary = io->buffer_size;
    while (p->boundary * 2 <= LONG_MAX - io->buffer_size) p->boundary *= 2;
    p->avail_min = io->period_size;
    p->stop_threshold = io->buffer_size;
    if (atomic_load(&p->lost) || !p->client) {
        if (p->client) stagebox_disconnect(p->client);
        int rc = connect_bus(p);
        if (rc < 0) { SNDERR("stagebox: %s", p->error); return rc; }
    }
    return make_port(p);
}

static int sb_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params) {
    sb_pcm *p = io->private_data;
    /* The thread may be running (a program may change avail_min while it plays): whole-word
     * stores, which it reads with whole-word loads. */
    snd_pcm_uframes_t boundary, avail_min, stop_threshold;
    snd_pcm_sw_params_get_boundary(params, &boundary);
    snd_pcm_sw_params_get_avail_min(params, &avail_min);
    snd_pcm_sw_params_get_stop_threshold(params, &stop_threshold);
    if (avail_min < 1) avail_min = 1;
    __atomic_store_n(&p->boundary, boundary, __ATOMIC_RELAXED);
    __atomic_store_n(&p->avail_min, avail_min, __ATOMIC_RELAXED);
    __atomic_store_n(&p->stop_threshold, stop_threshold, __ATOMIC_RELAXED);
    return 0;
}

static int sb_hw_free(snd_pcm_ioplug_t *io) {
    drop_port(io->private_data);
    return 0;
}

static int sb_prepare(snd_pcm_ioplug_t *io) {
    sb_pcm *p = io->private_data;
    atomic_store(&p->running, 0);
    if (atomic_load(&p->lost) && p->port) {
        /* The bus went away: connect again, as a device that came back. */
        drop_port(p);
        stagebox_disconnect(p->client);
        p->client = NULL;
        int64_t give_up = now_ms() + RECONNECT_MS;
        while (connect_bus(p) < 0) {
            if (now_ms() > give_up) {
                SNDERR("stagebox: the bus is gone: %s", p->error);
                return -ENODEV;
            }
            usleep(100000);
        }
        int rc = make_port(p);
        if (rc < 0) return rc;
    }
    atomic_store(&p->hw, 0);
    atomic_store(&p->xrun, 0);
    atomic_store(&p->drain_asked, 0);
    atomic_store(&p->drained, 0);
    atomic_store(&p->primed, 0);
    if (io->stream == SND_PCM_STREAM_PLAYBACK) notify(p); /* the whole buffer is free */
    return 0;
}

static int sb_start(snd_pcm_ioplug_t *io) {
    sb_pcm *p = io->private_data;
    atomic_store(&p->running, 1);
    return 0;
}

static int sb_stop(snd_pcm_ioplug_t *io) {
    halt(io->private_data);
    return 0;
}

static int sb_pause(snd_pcm_ioplug_t *io, int enable) {
    sb_pcm *p = io->private_data;
    if (enable) halt(p);
    else atomic_store(&p->running, 1);
    return 0;
}

static snd_pcm_sframes_t sb_pointer(snd_pcm_ioplug_t *io) {
    sb_pcm *p = io->private_data;
    if (atomic_load(&p->xrun)) return -EPIPE;
    return (snd_pcm_sframes_t)(atomic_load(&p->hw) % p->boundary);
}

/* Frames between the program and the codec's side of the bus: its buffer and the port's ring.
 * The codec's own buffer is not in it (the bus does not tell its clients that yet). */
static int sb_delay(snd_pcm_ioplug_t *io, snd_pcm_sframes_t *delay) {
    sb_pcm *p = io->private_data;
    *delay = (snd_pcm_sframes_t)buffered(p) + atomic_load(&p->pending);
    return 0;
}

static int sb_drain(snd_pcm_ioplug_t *io) {
    sb_pcm *p = io->private_data;
    atomic_store(&p->drain_asked, 1);
    atomic_store(&p->running, 1); /* a stream drained before it started plays now */
    /* Bounded: the buffer's length, the ring's and a margin. */
    int64_t give_up = now_ms() + (int64_t)io->buffer_size * 1000 / (p->rate ? p->rate : 1) + 3000;
    while (!atomic_load(&p->drained) && !atomic_load(&p->lost) && now_ms() < give_up) {
        struct pollfd fd = {.fd = p->notify, .events = POLLIN};
        poll(&fd, 1, 20);
        eventfd_t drop;
        if (fd.revents) eventfd_read(p->notify, &drop);
    }
    /* What the bus took plays within its period. */
    usleep((useconds_t)((uint64_t)p->block * 1000000 / (p->rate ? p->rate : 1)));
    atomic_store(&p->running, 0);
    return atomic_load(&p->lost) ? -ENODEV : 0;
}

static int sb_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds, unsigned short *revents) {
    sb_pcm *p = io->private_data;
    (void)nfds;
    *revents = 0;
    if (pfd[0].revents & POLLIN) {
        eventfd_t drop;
        eventfd_read(p->notify, &drop);
    }
    snd_pcm_state_t state = snd_pcm_state(io->pcm);
    snd_pcm_sframes_t a = snd_pcm_avail_update(io->pcm);
    if (a < 0 || atomic_load(&p->xrun) || state == SND_PCM_STATE_XRUN) {
        *revents = POLLERR;
    } else if ((snd_pcm_uframes_t)a >= p->avail_min) {
        *revents = io->stream == SND_PCM_STREAM_PLAYBACK ? POLLOUT : POLLIN;
    }
    /* Level-triggered, as a device's poll is: while it holds, the descriptor stays readable (the
     * running thread renews it every bus period; a stopped or paused stream renews it here). */
    if (*revents && state != SND_PCM_STATE_RUNNING) notify(p);
    return 0;
}

static int sb_close(snd_pcm_ioplug_t *io) {
    sb_pcm *p = io->private_data;
    drop_port(p);
    if (p->client) stagebox_disconnect(p->client);
    close(p->notify);
    close(p->stop);
    free(p->socket);
    free(p->name);
    free(p->link);
    free(p);
    return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
    .start = sb_start,
    .stop = sb_stop,
    .pointer = sb_pointer,
    .close = sb_close,
    .hw_params = sb_hw_params,
    .hw_free = sb_hw_free,
    .sw_params = sb_sw_params,
    .prepare = sb_prepare,
    .drain = sb_drain,
    .pause = sb_pause,
    .poll_revents = sb_poll_revents,
    .delay = sb_delay,
};

/* --- opening ----------------------------------------------------------------------------- */

/* "<program>-<pid>", the program's name cut to what a bus name may hold. */
static char *default_name(void) {
    char comm[32] = "alsa";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (!fgets(comm, sizeof comm, f)) strcpy(comm, "alsa");
        fclose(f);
    }
    size_t n = 0;
    for (char *c = comm; *c && *c != '\n' && n < 20; c++)
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_')
            comm[n++] = *c;
    comm[n] = 0;
    char *name = malloc(48);
    if (name) snprintf(name, 48, "%s-%d", n ? comm : "alsa", (int)getpid());
    return name;
}

static int set_constraints(sb_pcm *p) {
    static const unsigned int access[] = {SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_RW_NONINTERLEAVED,
                                          SND_PCM_ACCESS_MMAP_INTERLEAVED, SND_PCM_ACCESS_MMAP_NONINTERLEAVED};
    static const unsigned int formats[] = {SND_PCM_FORMAT_U8, SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S24_LE,
                                           SND_PCM_FORMAT_S24_3LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE};
    int rc;
    if ((rc = snd_pcm_ioplug_set_param_list(&p->io, SND_PCM_IOPLUG_HW_ACCESS, 4, access)) < 0 ||
        (rc = snd_pcm_ioplug_set_param_list(&p->io, SND_PCM_IOPLUG_HW_FORMAT, 6, formats)) < 0 ||
        (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 8)) < 0 ||
        (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_RATE, 8000, 192000)) < 0 ||
        (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 1 << 20)) < 0 ||
        (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 256, 4 << 20)) < 0 ||
        (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64)) < 0)
        return rc;
    return 0;
}

static int string_arg(snd_config_t *n, const char *id, char **out) {
    const char *s;
    if (snd_config_get_string(n, &s) < 0) {
        SNDERR("stagebox: %s must be a string", id);
        return -EINVAL;
    }
    free(*out);
    *out = *s ? strdup(s) : NULL;
    return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(stagebox) {
    (void)root;
    sb_pcm *p = calloc(1, sizeof *p);
    if (!p) return -ENOMEM;
    p->notify = p->stop = -1;
    int rc = 0;
    snd_config_iterator_t i, next;
    snd_config_for_each(i, next, conf) {
        snd_config_t *n = snd_config_iterator_entry(i);
        const char *id;
        if (snd_config_get_id(n, &id) < 0) continue;
        if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint")) continue;
        if (!strcmp(id, "name")) rc = string_arg(n, id, &p->name);
        else if (!strcmp(id, "socket")) rc = string_arg(n, id, &p->socket);
        else if (!strcmp(id, stream == SND_PCM_STREAM_PLAYBACK ? "sink" : "source")) rc = string_arg(n, id, &p->link);
        else if (!strcmp(id, "sink") || !strcmp(id, "source")) continue; /* the other direction's */
        else {
            SNDERR("stagebox: unknown field %s (known: name, sink, source, socket)", id);
            rc = -EINVAL;
        }
        if (rc < 0) goto fail;
    }
    if (!p->name) {
        p->name = default_name();
        p->default_name = 1;
    }
    if (!p->link) p->link = strdup(stream == SND_PCM_STREAM_PLAYBACK ? "codec.out" : "codec.in");
    p->notify = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    p->stop = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!p->name || !p->link || p->notify < 0 || p->stop < 0) { rc = -ENOMEM; goto fail; }
    if ((rc = connect_bus(p)) < 0) {
        SNDERR("stagebox: %s", p->error);
        goto fail;
    }
    p->io.version = SND_PCM_IOPLUG_VERSION;
    p->io.name = "Stagebox bus";
    p->io.callback = &callbacks;
    p->io.private_data = p;
    p->io.mmap_rw = 1;
    p->io.poll_fd = p->notify;
    p->io.poll_events = POLLIN;
    p->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA;
    if ((rc = snd_pcm_ioplug_create(&p->io, name, stream, mode)) < 0) goto fail;
    if ((rc = set_constraints(p)) < 0) {
        snd_pcm_ioplug_delete(&p->io);
        return rc;
    }
    *pcmp = p->io.pcm;
    return 0;
fail:
    if (p->client) stagebox_disconnect(p->client);
    if (p->notify >= 0) close(p->notify);
    if (p->stop >= 0) close(p->stop);
    free(p->socket);
    free(p->name);
    free(p->link);
    free(p);
    return rc;
}

SND_PCM_PLUGIN_SYMBOL(stagebox);
