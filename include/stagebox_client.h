/*
 * stagebox_client.h — the C client library of the Stagebox audio bus.
 *
 * A program on the board connects to the running `stagebox`, gets ports on its bus and moves
 * audio through shared memory. Three shapes are offered:
 *   - Audiobus: sender, receiver and filter ports;
 *   - Vonage Video: a custom audio device's capture and render sides
 *     (write_capture_data / read_render_data);
 *   - Agora: an external audio source (push frames), an external audio sink (pull frames) and a
 *     playback frame observer.
 * Samples are interleaved; 16-bit integers or 32-bit floats in [-1, 1]. A port runs at the
 * program's own sample rate: the bus converts, and absorbs a program clock that drifts.
 * No call blocks unless its name says wait; calls return 0 (or a handle) on success and a
 * negative number (or NULL) on failure, with a message in the error buffer where one is taken.
 *
 * Link with -lStageboxClientC.
 */
#ifndef STAGEBOX_CLIENT_H
#define STAGEBOX_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stagebox_client stagebox_client;
typedef struct stagebox_port stagebox_port;
typedef struct stagebox_vonage_device stagebox_vonage_device;
typedef struct stagebox_agora stagebox_agora;
typedef struct stagebox_trigger stagebox_trigger;

/* Connecting. socket_path NULL means where `stagebox run` listens when nothing names a socket:
 * $STAGEBOX_SOCKET, else /run/stagebox/bus.sock for root, else $XDG_RUNTIME_DIR/stagebox/bus.sock,
 * else /tmp/stagebox-UID/bus.sock. */
stagebox_client *stagebox_connect(const char *socket_path, const char *client_name, char *error, size_t error_size);
void stagebox_disconnect(stagebox_client *client);
int stagebox_bus_sample_rate(const stagebox_client *client);
int stagebox_bus_period(const stagebox_client *client);
/* 1 when the connection to the bus is lost (stagebox stopped or restarted), with the reason in
 * the error buffer; 0 while it works. Ports of a lost connection take and give nothing: connect
 * again. */
int stagebox_connection_lost(const stagebox_client *client, char *error, size_t error_size);

/* The bus. Port names are "client.port"; built in: codec.in, codec.out, tone. A connection's
 * ends are a port or one of its channels, "port:channel" from 1 (codec.in:1). */
int stagebox_connect_ports(stagebox_client *client, const char *from, const char *to, char *error, size_t error_size);
int stagebox_disconnect_ports(stagebox_client *client, const char *from, const char *to, char *error, size_t error_size);
int stagebox_set_muted(stagebox_client *client, const char *port, int muted, char *error, size_t error_size);
/* Fires a trigger: a built-in one (record, mute, mute-out, play, marker, copy-takes, where this
 * stagebox has it; update only shows an update's state) or a client's ("call.mic-mute"). A disabled trigger is not fired: -1 with
 * "trigger NAME is disabled" in the error buffer; -1 too when the trigger's own action failed
 * (its state is then error; stagebox's log says why) and for update, which only shows a state. */
int stagebox_fire_trigger(stagebox_client *client, const char *name, char *error, size_t error_size);

/* Trigger states (Audiobus's); the numbers are the bus's. */
enum {
    STAGEBOX_TRIGGER_NORMAL = 0,    /* off, e.g. not muted */
    STAGEBOX_TRIGGER_SELECTED = 1,  /* on, e.g. muted */
    STAGEBOX_TRIGGER_DISABLED = 2,  /* cannot be fired now: firing it does nothing */
    STAGEBOX_TRIGGER_ALTERNATE = 3, /* a third state, e.g. armed */
    STAGEBOX_TRIGGER_ERROR = 4      /* something went wrong */
};

/* Called when the program's trigger is fired, with the trigger and the context given at creation.
 * It runs on the client's own event thread (never the caller's, never a real-time one), where the
 * library's requests may be made: it may set the trigger's new state. Keep it short: other
 * triggers' callbacks wait for it. */
typedef void (*stagebox_trigger_fn)(stagebox_trigger *trigger, void *context);

/* The program's own trigger (Audiobus's custom trigger), named "client.name" on the bus. Buttons,
 * the console, other clients and `stagebox trigger` fire it; each fire calls `on_fire`. Firing
 * does not change its state: the program sets it (stagebox_trigger_set_state), and every client
 * is told. name: letters, digits, '_' and '-' (no '.'); title: at most 64 bytes, no control
 * characters, NULL or "" for the name; state: one of STAGEBOX_TRIGGER_*. At most 16 triggers per
 * client. The trigger leaves the bus with stagebox_trigger_remove, or when the program
 * disconnects or dies. NULL on failure, with the reason in the error buffer. */
stagebox_trigger *stagebox_trigger_create(stagebox_client *client, const char *name, const char *title, int state,
                                          stagebox_trigger_fn on_fire, void *context, char *error, size_t error_size);
/* Sets the trigger's state (what buttons' LEDs and other clients show); 0, or -1 with the reason.
 * STAGEBOX_TRIGGER_DISABLED makes firing it do nothing until another state is set. */
int stagebox_trigger_set_state(stagebox_trigger *trigger, int state, char *error, size_t error_size);
/* The state this program last set (or created it with). */
int stagebox_trigger_state(const stagebox_trigger *trigger);
/* The trigger's bus name, "client.name"; valid until the trigger is removed. */
const char *stagebox_trigger_name(const stagebox_trigger *trigger);
/* Takes the trigger off the bus and frees it; its callback is not called again once this
 * returns (a call already running finishes). May be called from inside the callback. */
void stagebox_trigger_remove(stagebox_trigger *trigger);

/* Audiobus shape. sample_rate 0 means the bus's rate. */
stagebox_port *stagebox_add_sender(stagebox_client *client, const char *name, int channels, int sample_rate,
                                   char *error, size_t error_size);
stagebox_port *stagebox_add_receiver(stagebox_client *client, const char *name, int channels, int sample_rate,
                                     char *error, size_t error_size);
/* A filter's function runs on the port's own thread for every period, in place, at the bus's rate. */
typedef void (*stagebox_filter_fn)(float *samples, int frames, int channels, void *context);
stagebox_port *stagebox_add_filter(stagebox_client *client, const char *name, int channels,
                                   stagebox_filter_fn process, void *context, char *error, size_t error_size);
void stagebox_port_remove(stagebox_port *port);
/* The port's bus name; valid until the port is removed. */
const char *stagebox_port_name(const stagebox_port *port);
/* Safe on a real-time thread. */
int stagebox_port_is_connected(const stagebox_port *port);
int stagebox_port_is_muted(const stagebox_port *port);

int stagebox_send_float(stagebox_port *sender, const float *samples, int frames);
int stagebox_send_int16(stagebox_port *sender, const int16_t *samples, int frames);
/* Fills frames frames; returns 1 if the bus had them all, 0 if silence filled a gap. */
int stagebox_receive_float(stagebox_port *receiver, float *samples, int frames);
int stagebox_receive_int16(stagebox_port *receiver, int16_t *samples, int frames);
/* Wait for room to send, or for data to receive; 1 when ready, 0 on timeout. While
 * stagebox_wait_data waits, the bus wakes the program once the frames are there, not every
 * period: receiving 20 ms at a time costs a wakeup every 20 ms. */
int stagebox_wait_space(stagebox_port *sender, int frames, int timeout_ms);
int stagebox_wait_data(stagebox_port *receiver, int frames, int timeout_ms);
/* Waits until the bus has taken everything sent (or the timeout); 1 when drained. */
int stagebox_drain(stagebox_port *sender, int timeout_ms);

/* Waiting in a poll loop of the program's own, beside its other descriptors: the bus signals
 * the port's descriptor (readable, POLLIN) after every period in which it took from a sender or
 * delivered to a receiver (while stagebox_wait_data waits on a receiver, only once its frames
 * are there: use one way of waiting per port, from one thread). stagebox_port_take_wakeups
 * clears it; a program that sends or receives when woken there is paced by the bus (its clock
 * is the bus's, as with the wait calls). */
int stagebox_port_descriptor(const stagebox_port *port);
void stagebox_port_take_wakeups(stagebox_port *port);
/* Frames between the program and the bus, in the program's frames at its own rate: for a sender,
 * sent and not yet taken by the bus; for a receiver, delivered and not yet received. */
int stagebox_port_pending(const stagebox_port *port);

/* Statistics of a port. */
typedef struct {
    int64_t underruns;
    int64_t overruns;
    int32_t fill_frames;
    double ratio;
} stagebox_port_stats;
void stagebox_port_get_stats(const stagebox_port *port, stagebox_port_stats *stats);

/* Vonage Video shape: the audio bus of a custom audio device. */
stagebox_vonage_device *stagebox_vonage_create(stagebox_client *client, int capture_rate, int capture_channels,
                                               int render_rate, int render_channels);
int stagebox_vonage_start_capture(stagebox_vonage_device *device);
int stagebox_vonage_stop_capture(stagebox_vonage_device *device);
int stagebox_vonage_start_rendering(stagebox_vonage_device *device);
int stagebox_vonage_stop_rendering(stagebox_vonage_device *device);
/* Returns the frames taken or delivered. */
int stagebox_vonage_write_capture_data(stagebox_vonage_device *device, const int16_t *samples, int count);
int stagebox_vonage_read_render_data(stagebox_vonage_device *device, int16_t *buffer, int count);
/* The bus names of the capture (sender) and render (receiver) ports, once started. */
const char *stagebox_vonage_capture_port(const stagebox_vonage_device *device);
const char *stagebox_vonage_render_port(const stagebox_vonage_device *device);
void stagebox_vonage_destroy(stagebox_vonage_device *device);

/* Agora shape. */
stagebox_agora *stagebox_agora_create(stagebox_client *client);
int stagebox_agora_enable_external_audio_source(stagebox_agora *agora, int sample_rate, int channels);
int stagebox_agora_push_external_audio_frame(stagebox_agora *agora, const int16_t *data, int samples, int64_t timestamp);
int stagebox_agora_enable_external_audio_sink(stagebox_agora *agora, int sample_rate, int channels);
int stagebox_agora_pull_playback_audio_frame(stagebox_agora *agora, void *data, int length_in_bytes);
typedef int (*stagebox_playback_frame_fn)(const int16_t *samples, int samples_per_channel, int channels,
                                          int sample_rate, int64_t render_time_ms, void *context);
/* Registers (or with NULL removes) the playback observer: called every 10 ms on its own thread.
   0, or -1 when that thread cannot start (then no observer is registered). */
int stagebox_agora_set_playback_observer(stagebox_agora *agora, stagebox_playback_frame_fn fn, void *context);
const char *stagebox_agora_source_port(const stagebox_agora *agora);
const char *stagebox_agora_sink_port(const stagebox_agora *agora);
void stagebox_agora_destroy(stagebox_agora *agora);

#ifdef __cplusplus
}
#endif
#endif
