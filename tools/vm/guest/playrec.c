/*
 * playrec: the rig's signal generator and analyser in one process, for tools/vm's
 * audio scenarios. Plays raw files into playback devices and records capture
 * devices, with every stream linked (snd_pcm_link) and started by one trigger, so
 * that all of them share frame 0: an offset found in a capture is a latency, free
 * of process start-up skew. Built by tools/vm/prepare into $CACHE/bin/playrec.
 *
 * usage: playrec [options] (--play DEVICE FILE | --capture DEVICE FILE)...
 *   --format NAME     ALSA sample format (S16_LE, S32_LE, ...)   default S16_LE
 *   --rate HZ         default 48000          --channels N        default 2
 *   --period FRAMES   default 1024           --periods N         default 8
 *   --frames N        record N frames per capture (required with --capture)
 *   --wait            open, prefill and print READY, then start on a line on stdin
 *   --priority N      SCHED_FIFO priority (0: leave the policy alone)
 * A playback plays its FILE, then silence. Captures are kept in memory and written
 * when the run ends. Prints "started: ..." with the trigger time and "done: ...".
 * Exit status: 0 done; 1 usage or device error; 3 an xrun in playrec itself (its
 * buffers are large: that means the guest stalled, i.e. the rig, not the program
 * under test, failed).
 */
#include <alsa/asoundlib.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_STREAMS 8

struct stream {
	const char *device, *file;
	snd_pcm_stream_t dir;
	snd_pcm_t *pcm;
	unsigned char *data; /* playback: the file; capture: the recording */
	size_t frames, pos;  /* frames in data, frames done */
};

static struct stream streams[MAX_STREAMS];
static int nstreams;
static snd_pcm_format_t format = SND_PCM_FORMAT_S16_LE;
static unsigned rate = 48000, channels = 2, periods = 8;
static snd_pcm_uframes_t period = 1024;
static size_t frame_bytes, capture_frames;

static void die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("playrec: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(status);
}

#define CHECK(call, what, s)                                                                   \
	do {                                                                                   \
		int rc_ = (call);                                                              \
		if (rc_ < 0)                                                                   \
			die(1, "%s: %s: %s", (s)->device, what, snd_strerror(rc_));            \
	} while (0)

static void load(struct stream *s)
{
	FILE *f = fopen(s->file, "rb");
	if (!f)
		die(1, "cannot read %s: %s", s->file, strerror(errno));
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	rewind(f);
	s->data = malloc(size > 0 ? (size_t)size : 1);
	if (!s->data || fread(s->data, 1, (size_t)size, f) != (size_t)size)
		die(1, "cannot read %s", s->file);
	fclose(f);
	s->frames = (size_t)size / frame_bytes;
}

static void setup(struct stream *s)
{
	snd_pcm_hw_params_t *hw;
	snd_pcm_sw_params_t *sw;
	snd_pcm_uframes_t p = period, b = period * periods, boundary;
	unsigned r = rate;

	CHECK(snd_pcm_open(&s->pcm, s->device, s->dir, 0), "open", s);
	snd_pcm_hw_params_alloca(&hw);
	CHECK(snd_pcm_hw_params_any(s->pcm, hw), "hw_params_any", s);
	CHECK(snd_pcm_hw_params_set_rate_resample(s->pcm, hw, 0), "rate_resample", s);
	CHECK(snd_pcm_hw_params_set_access(s->pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "access", s);
	CHECK(snd_pcm_hw_params_set_format(s->pcm, hw, format), "format", s);
	CHECK(snd_pcm_hw_params_set_channels(s->pcm, hw, channels), "channels", s);
	CHECK(snd_pcm_hw_params_set_rate(s->pcm, hw, r, 0), "rate", s);
	CHECK(snd_pcm_hw_params_set_period_size(s->pcm, hw, p, 0), "period size", s);
	CHECK(snd_pcm_hw_params_set_buffer_size(s->pcm, hw, b), "buffer size", s);
	CHECK(snd_pcm_hw_params(s->pcm, hw), "hw_params", s);

	snd_pcm_sw_params_alloca(&sw);
	CHECK(snd_pcm_sw_params_current(s->pcm, sw), "sw_params_current", s);
	CHECK(snd_pcm_sw_params_get_boundary(sw, &boundary), "boundary", s);
	/* Nothing starts on its own (the trigger starts all streams) and any xrun stops. */
	CHECK(snd_pcm_sw_params_set_start_threshold(s->pcm, sw, boundary), "start_threshold", s);
	CHECK(snd_pcm_sw_params_set_stop_threshold(s->pcm, sw, b), "stop_threshold", s);
	CHECK(snd_pcm_sw_params_set_avail_min(s->pcm, sw, p), "avail_min", s);
	CHECK(snd_pcm_sw_params_set_tstamp_mode(s->pcm, sw, SND_PCM_TSTAMP_ENABLE), "tstamp", s);
	CHECK(snd_pcm_sw_params_set_tstamp_type(s->pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC), "tstamp type", s);
	CHECK(snd_pcm_sw_params(s->pcm, sw), "sw_params", s);
}

/* Playback: the next n frames of the file, then silence. */
static void play(struct stream *s, snd_pcm_uframes_t n)
{
	unsigned char buf[n * frame_bytes];
	size_t have = s->pos < s->frames ? s->frames - s->pos : 0;
	if (have > n)
		have = n;
	memcpy(buf, s->data + s->pos * frame_bytes, have * frame_bytes);
	snd_pcm_format_set_silence(format, buf + have * frame_bytes, (n - have) * channels);
	snd_pcm_uframes_t done = 0;
	while (done < n) {
		snd_pcm_sframes_t w = snd_pcm_writei(s->pcm, buf + done * frame_bytes, n - done);
		if (w == -EPIPE)
			die(3, "%s: underrun after %zu frames (the guest stalled?)", s->device, s->pos + done);
		if (w < 0)
			die(1, "%s: write: %s", s->device, snd_strerror((int)w));
		done += (snd_pcm_uframes_t)w;
	}
	s->pos += n;
}

static void record(struct stream *s, snd_pcm_uframes_t n)
{
	snd_pcm_uframes_t done = 0;
	while (done < n) {
		snd_pcm_sframes_t r = snd_pcm_readi(s->pcm, s->data + (s->pos + done) * frame_bytes, n - done);
		if (r == -EPIPE)
			die(3, "%s: overrun after %zu frames (the guest stalled?)", s->device, s->pos + done);
		if (r < 0)
			die(1, "%s: read: %s", s->device, snd_strerror((int)r));
		done += (snd_pcm_uframes_t)r;
	}
	s->pos += n;
}

static void usage(void)
{
	die(1, "usage: playrec [--format F] [--rate HZ] [--channels N] [--period FRAMES] [--periods N]\n"
	       "               [--frames N] [--wait] [--priority N] (--play DEVICE FILE | --capture DEVICE FILE)...");
}

int main(int argc, char **argv)
{
	int wait = 0, priority = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (!strcmp(a, "--wait")) {
			wait = 1;
		} else if ((!strcmp(a, "--play") || !strcmp(a, "--capture")) && i + 2 < argc) {
			if (nstreams == MAX_STREAMS)
				die(1, "at most %d streams", MAX_STREAMS);
			struct stream *s = &streams[nstreams++];
			s->dir = a[2] == 'p' ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE;
			s->device = argv[++i];
			s->file = argv[++i];
		} else if (!more) {
			usage();
		} else if (!strcmp(a, "--format")) {
			format = snd_pcm_format_value(argv[++i]);
			if (format == SND_PCM_FORMAT_UNKNOWN)
				die(1, "unknown format %s", argv[i]);
		} else if (!strcmp(a, "--rate")) {
			rate = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(a, "--channels")) {
			channels = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(a, "--period")) {
			period = (snd_pcm_uframes_t)atol(argv[++i]);
		} else if (!strcmp(a, "--periods")) {
			periods = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(a, "--frames")) {
			capture_frames = (size_t)atol(argv[++i]);
		} else if (!strcmp(a, "--priority")) {
			priority = atoi(argv[++i]);
		} else {
			usage();
		}
	}
	if (nstreams == 0 || !rate || !channels || !period || periods < 2)
		usage();
	frame_bytes = (size_t)snd_pcm_format_physical_width(format) / 8 * channels;
	for (int i = 0; i < nstreams; i++) {
		struct stream *s = &streams[i];
		if (s->dir == SND_PCM_STREAM_PLAYBACK) {
			load(s);
		} else {
			if (!capture_frames)
				die(1, "--capture needs --frames");
			s->data = calloc(capture_frames + period, frame_bytes);
			if (!s->data)
				die(1, "out of memory");
		}
		setup(s);
	}
	for (int i = 1; i < nstreams; i++)
		CHECK(snd_pcm_link(streams[0].pcm, streams[i].pcm), "snd_pcm_link", &streams[i]);
	for (int i = 0; i < nstreams; i++)
		CHECK(snd_pcm_prepare(streams[i].pcm), "prepare", &streams[i]);
	for (int i = 0; i < nstreams; i++)
		if (streams[i].dir == SND_PCM_STREAM_PLAYBACK)
			play(&streams[i], period * periods);
	if (priority > 0) {
		struct sched_param sp = {.sched_priority = priority};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			fprintf(stderr, "playrec: SCHED_FIFO %d refused: %s\n", priority, strerror(errno));
	}
	mlockall(MCL_CURRENT | MCL_FUTURE);
	if (wait) {
		char line[64];
		puts("READY");
		fflush(stdout);
		if (!fgets(line, sizeof line, stdin))
			die(1, "stdin closed before the start");
	}
	CHECK(snd_pcm_start(streams[0].pcm), "start", &streams[0]);
	for (int i = 0; i < nstreams; i++)
		if (snd_pcm_state(streams[i].pcm) != SND_PCM_STATE_RUNNING)
			die(1, "%s: not running after the linked start", streams[i].device);
	{
		snd_pcm_status_t *st;
		snd_htimestamp_t t;
		snd_pcm_status_alloca(&st);
		CHECK(snd_pcm_status(streams[0].pcm, st), "status", &streams[0]);
		snd_pcm_status_get_trigger_htstamp(st, &t);
		printf("started: %d streams linked, trigger %lld.%09ld s\n", nstreams, (long long)t.tv_sec, t.tv_nsec);
		fflush(stdout);
	}
	for (size_t done = 0; done < capture_frames; done += period) {
		for (int i = 0; i < nstreams; i++)
			if (streams[i].dir == SND_PCM_STREAM_CAPTURE)
				record(&streams[i], period);
		for (int i = 0; i < nstreams; i++)
			if (streams[i].dir == SND_PCM_STREAM_PLAYBACK)
				play(&streams[i], period);
	}
	snd_pcm_drop(streams[0].pcm);
	for (int i = 0; i < nstreams; i++) {
		struct stream *s = &streams[i];
		if (s->dir != SND_PCM_STREAM_CAPTURE)
			continue;
		FILE *f = fopen(s->file, "wb");
		if (!f || fwrite(s->data, frame_bytes, capture_frames, f) != capture_frames || fclose(f))
			die(1, "cannot write %s: %s", s->file, strerror(errno));
	}
	printf("done: %zu frames\n", capture_frames);
	return 0;
}
