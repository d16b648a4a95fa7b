"""The ALSA plugin next to a native client: CPU per second of audio of the client process
(its own threads and the plugin's), and of the stagebox serving it, for the same stream
(48 kHz stereo onto codec.out of a simulated board), each client alone, N rounds. And each
client's memory: resident, and its own of that (private pages: not shared with another
process or the page cache's other users); `aplay -D null` (ALSA's null PCM, no plugin) is the
baseline that tells what the plugin adds to a program.

    plugin.py --bin DIR [--seconds S] [--rounds N]

DIR holds the release `stagebox` and `sine_sender` (examples/c, through the C library: a
period at a time, as a JACK client). The plugin clients are `aplay -D stagebox` of raw
zeros, with aplay's own buffer and with a JACK-like one (64-frame periods, 4 of them). The
plugin must be installed (tools/setup does it).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

import procstat


def memory_kib(pid):
    """(resident, private) KiB of the process, from /proc/PID/smaps_rollup."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                fields[key] = int(value.split()[0])
    return fields["Rss"], fields["Private_Clean"] + fields["Private_Dirty"]


def measure(argv, env, seconds, board_pid):
    """Starts argv, lets it settle a second, then returns (client %, board %, resident KiB,
    private KiB) over `seconds` (the memory read at the end)."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)
        if p.poll() is not None:
            raise RuntimeError(f"{argv[0]} ended early: {p.stderr.read().decode(errors='replace').strip()}")
        c0, b0, t0 = procstat.cpu_seconds(p.pid), procstat.cpu_seconds(board_pid), time.monotonic()
        time.sleep(seconds)
        c1, b1, t1 = procstat.cpu_seconds(p.pid), procstat.cpu_seconds(board_pid), time.monotonic()
        rss, own = memory_kib(p.pid)
    finally:
        p.terminate()
        p.wait()
    return 100 * (c1 - c0) / (t1 - t0), 100 * (b1 - b0) / (t1 - t0), rss, own


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "bus.sock")
        conf = os.path.join(tmp, "board.toml")
        with open(conf, "w") as f:
            f.write(f'[audio]\nperiod = 64\nrt_priority = {70 if os.geteuid() == 0 else 0}\n[bus]\nsocket = "{sock}"\n')
        board = subprocess.Popen([os.path.join(args.bin, "stagebox"), "run", "--simulate", "--config", conf],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(200):
                if os.path.exists(sock):
                    break
                time.sleep(0.02)
            env = dict(os.environ, STAGEBOX_SOCKET=sock)
            raw = ["-q", "-f", "S16_LE", "-r", "48000", "-c", "2", "-t", "raw", "/dev/zero"]
            clients = [
                ("C library, sine_sender (period by period)",
                 [os.path.join(args.bin, "sine_sender"), sock, "native", "codec.out"]),
                ("aplay -D stagebox (aplay's buffer)", ["aplay", "-D", "stagebox:NAME=aplay1"] + raw),
                ("aplay -D stagebox, 64-frame periods x4",
                 ["aplay", "-D", "stagebox:NAME=aplay2", "--period-size=64", "--buffer-size=256"] + raw),
                ("aplay -D null (no plugin: the baseline)", ["aplay", "-D", "null"] + raw),
            ]
            results = {name: [] for name, _ in clients}
            for _ in range(args.rounds):  # interleaved: A B C A B C …
                for name, argv in clients:
                    results[name].append(measure(argv, env, args.seconds, board.pid))
        finally:
            board.terminate()
            board.wait()
    print(f"ALSA plugin against a native client: 48 kHz stereo onto codec.out, bus period 64, "
          f"{args.rounds} x {args.seconds:g} s, median (min-max)")
    print(f"{'client':44} {'client CPU %':>22} {'stagebox CPU %':>22} {'RSS MiB':>8} {'own MiB':>8}")

    def cell(values):
        return f"{statistics.median(values):6.2f} ({min(values):.2f}-{max(values):.2f})"

    def mib(rows, i):
        return statistics.median(r[i] for r in rows) / 1024

    baseline = "aplay -D null (no plugin: the baseline)"
    for name, rows in results.items():
        # The null PCM has no clock: aplay writes to it as fast as it can, so its CPU says nothing.
        cpu = ("— (unpaced)", "—") if name == baseline else (cell([r[0] for r in rows]), cell([r[1] for r in rows]))
        print(f"{name:44} {cpu[0]:>22} {cpu[1]:>22} {mib(rows, 2):8.1f} {mib(rows, 3):8.1f}")
    base = results[baseline]
    plugged = results["aplay -D stagebox (aplay's buffer)"]
    print(f"the plugin adds {mib(plugged, 2) - mib(base, 2):.1f} MiB resident to aplay, "
          f"{mib(plugged, 3) - mib(base, 3):.1f} MiB of it aplay's own")


if __name__ == "__main__":
    main()
