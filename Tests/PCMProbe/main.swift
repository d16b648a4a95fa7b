// pcm-probe: drives an ALSA PCM (the `stagebox` plugin in the tests) through alsa-lib's own
// snd_pcm_* calls and prints what it saw as `key=value` lines, for StageboxALSAPluginTests.
//
//   pcm-probe latency DEVICE LOOP    plays an impulse through DEVICE and captures it back (the
//                                    simulated board's loop cable, LOOP frames); prints the
//                                    measured delay of both streams and what snd_pcm_delay said
//   pcm-probe poll DEVICE SECONDS    plays a tone from a non-blocking poll loop at 44.1 kHz;
//                                    prints wakeups, wakeups with too little room, CPU, then
//                                    what pause, resume and drain did
import CALSA
import Glibc

/// Writes a line to standard error.
func complain(_ text: String) { _ = text.withCString { write(2, $0, strlen($0)) }; _ = write(2, "\n", 1) }

func fail(_ what: String, _ rc: Int32) -> Never {
    complain("pcm-probe: \(what): \(String(cString: snd_strerror(rc)))")
    exit(2)
}

func check(_ rc: Int32, _ what: String) { if rc < 0 { fail(what, rc) } }

func seconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func cpuSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
}

/// Opens `device` S16_LE interleaved with the given shape; returns the PCM and its period.
func open(_ device: String, _ stream: snd_pcm_stream_t, rate: UInt32, channels: UInt32, period: Int, periods: Int,
          nonblocking: Bool = false) -> (OpaquePointer, Int) {
    var pcm: OpaquePointer?
    check(snd_pcm_open(&pcm, device, stream, nonblocking ? SND_PCM_NONBLOCK : 0), "opening \(device)")
    var hw: OpaquePointer?
    snd_pcm_hw_params_malloc(&hw)
    defer { snd_pcm_hw_params_free(hw) }
    check(snd_pcm_hw_params_any(pcm, hw), "hw_params_any")
    check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "access")
    check(snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE), "format")
    check(snd_pcm_hw_params_set_channels(pcm, hw, channels), "channels")
    var r = rate
    check(snd_pcm_hw_params_set_rate_near(pcm, hw, &r, nil), "rate")
    var p = snd_pcm_uframes_t(period)
    check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &p, nil), "period")
    var b = snd_pcm_uframes_t(period * periods)
    check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &b), "buffer")
    check(snd_pcm_hw_params(pcm, hw), "hw_params")
    return (pcm!, Int(p))
}

func delay(_ pcm: OpaquePointer) -> Int {
    var d: snd_pcm_sframes_t = 0
    check(snd_pcm_delay(pcm, &d), "delay")
    return d
}

/// Threads of this process under SCHED_FIFO (the plugin's, where it was allowed), from the
/// policy field of /proc/self/task/TID/stat.
func fifoThreads() -> Int {
    guard let dir = opendir("/proc/self/task") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard Int(name) != nil, let f = fopen("/proc/self/task/\(name)/stat", "r") else { continue }
        var line = [UInt8](repeating: 0, count: 1024)
        let got = line.withUnsafeMutableBufferPointer { fread($0.baseAddress, 1, 1023, f) }
        let text = String(decoding: line.prefix(got), as: UTF8.self)
        fclose(f)
        // After the command's closing parenthesis: field 3 is the state, field 41 the policy.
        guard let close = text.lastIndex(of: ")") else { continue }
        let fields = text[text.index(after: close)...].split(separator: " ")
        if fields.count > 38, fields[38] == "1" { count += 1 }
    }
    return count
}

func bufferSize(_ pcm: OpaquePointer) -> Int {
    var buffer: snd_pcm_uframes_t = 0, period: snd_pcm_uframes_t = 0
    check(snd_pcm_get_params(pcm, &buffer, &period), "get_params")
    return Int(buffer)
}

/// Plays a tone from a non-blocking poll loop for `duration` seconds, then pauses, resumes and
/// drains; prints what each step did.
func pollLoop(device: String, duration: Double) {
    let channels = 2, rate = 44100
    let (pcm, period) = open(device, SND_PCM_STREAM_PLAYBACK, rate: UInt32(rate), channels: UInt32(channels), period: 1024,
                             periods: 4, nonblocking: true)
    let count = Int(snd_pcm_poll_descriptors_count(pcm))
    var fds = [pollfd](repeating: pollfd(), count: count)
    check(snd_pcm_poll_descriptors(pcm, &fds, UInt32(count)), "poll_descriptors")
    var tone = [Int16](repeating: 0, count: period * channels)
    var phase = 0
    var wakeups = 0, empty = 0, short = 0, written = 0, xruns = 0
    let cpu0 = cpuSeconds(), start = seconds()
    /// Fills the buffer as far as it has room, a period at a time.
    func fill() {
        while true {
            let avail = snd_pcm_avail_update(pcm)
            if avail == -Int(EPIPE) { xruns += 1; check(snd_pcm_prepare(pcm), "prepare"); continue }
            check(Int32(avail), "avail_update")
            if avail < period { return }
            for i in 0..<period {
                let s = Int16(8000 * sin(Double(phase + i) * 2 * Double.pi * 440 / Double(rate)))
                tone[i * channels] = s
                tone[i * channels + 1] = s
            }
            phase += period
            let n = snd_pcm_writei(pcm, tone, snd_pcm_uframes_t(period))
            check(Int32(n), "writei")
            written += n
        }
    }
    fill()
    while seconds() - start < duration {
        let rc = poll(&fds, nfds_t(count), 1000)
        if rc <= 0 { empty += 1; continue }
        wakeups += 1
        var revents: UInt16 = 0
        check(snd_pcm_poll_descriptors_revents(pcm, &fds, UInt32(count), &revents), "revents")
        if revents & UInt16(POLLERR) != 0 { xruns += 1; check(snd_pcm_prepare(pcm), "prepare"); continue }
        if revents & UInt16(POLLOUT) == 0 { continue }
        if snd_pcm_avail_update(pcm) < period { short += 1 }
        fill()
    }
    let elapsed = seconds() - start
    print("wakeups_per_second=\(Double(wakeups) / elapsed)")
    print("timeouts=\(empty)")
    print("pollout_without_room=\(short)")
    print("cpu_percent=\((cpuSeconds() - cpu0) / elapsed * 100)")
    print("written_seconds=\(Double(written) / Double(rate))")
    print("elapsed_seconds=\(elapsed)")
    print("xruns=\(xruns)")
    print("fifo_threads=\(fifoThreads())")

    // Pause: the hardware pointer stands still (avail does not grow) until resumed.
    fill()
    check(snd_pcm_pause(pcm, 1), "pause")
    let before = snd_pcm_avail(pcm)
    usleep(500_000)
    let after = snd_pcm_avail(pcm)
    print("paused_moved=\(after - before)")
    check(snd_pcm_pause(pcm, 0), "resume")
    usleep(200_000)
    print("resumed_moved=\(snd_pcm_avail(pcm) - after)")

    // Drain: returns when the bus has taken everything written.
    fill()
    check(snd_pcm_nonblock(pcm, 0), "blocking")
    let queued = delay(pcm)
    let t0 = seconds()
    check(snd_pcm_drain(pcm), "drain")
    print("drain_expected_ms=\(Double(queued) * 1000 / Double(rate))")
    print("drain_ms=\((seconds() - t0) * 1000)")
    snd_pcm_close(pcm)
}

func latency(device: String, loop: Int) {
    let channels = 2, rate: UInt32 = 48000
    let (play, period) = open(device, SND_PCM_STREAM_PLAYBACK, rate: rate, channels: UInt32(channels), period: 256, periods: 4)
    let (capture, _) = open(device, SND_PCM_STREAM_CAPTURE, rate: rate, channels: UInt32(channels), period: 256, periods: 4)
    var out = [Int16](repeating: 0, count: period * channels), input = out
    check(snd_pcm_prepare(capture), "prepare capture")
    check(snd_pcm_start(capture), "start capture")
    // Three periods of silence first: the capture delivers only once the bus has four of its
    // blocks waiting (the plugin's cushion) plus a period, and two periods of playback could
    // run dry before the first read returned, a real underrun of this program's own making.
    for _ in 0..<3 { check(Int32(snd_pcm_writei(play, out, snd_pcm_uframes_t(period))), "prefill") }
    var read = 0, queried = -1, reported = 0, arrival = -1
    for cycle in 0..<600 where arrival < 0 {
        let got = snd_pcm_readi(capture, &input, snd_pcm_uframes_t(period))
        check(Int32(got), "readi")
        for i in 0..<got where queried >= 0 && arrival < 0 && abs(Int(input[i * channels])) > 8192 { arrival = read + i }
        read += got
        if cycle == 200 {
            // The frame captured now is read after the capture's delay, and the impulse written
            // next plays after the playback's: it should arrive that much (plus the loop) later.
            queried = read
            let (dc, dp) = (delay(capture), delay(play))
            reported = dc + dp
            // What the plugin adds: the delay beyond the frames in the program's own buffer.
            print("added_capture=\(dc - snd_pcm_avail(capture))")
            print("added_playback=\(dp - (bufferSize(play) - snd_pcm_avail(play)))")
            out[0] = 16384
            out[1] = 16384
        }
        check(Int32(snd_pcm_writei(play, out, snd_pcm_uframes_t(period))), "writei")
        out[0] = 0
        out[1] = 0
    }
    print("period=\(period)")
    print("reported=\(reported)")
    print("measured=\(arrival < 0 ? -1 : arrival - queried - loop)")
    snd_pcm_close(play)
    snd_pcm_close(capture)
}

let args = CommandLine.arguments
guard args.count == 4 else {
    complain("usage: pcm-probe latency DEVICE LOOP | pcm-probe poll DEVICE SECONDS")
    exit(2)
}
switch args[1] {
case "latency": latency(device: args[2], loop: Int(args[3]) ?? 0)
case "poll": pollLoop(device: args[2], duration: Double(args[3]) ?? 5)
default:
    complain("pcm-probe: unknown mode \(args[1])")
    exit(2)
}
