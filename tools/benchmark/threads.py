"""What each of the appliance's threads costs when nobody uses it: `stagebox run --simulate`
(the card's static binary by default) idle for --seconds, each thread's CPU time (its
/proc/PID/task/TID/schedstat: nanoseconds on a CPU, exact, unlike the 10 ms ticks of `stat`)
and its wakeups (voluntary context switches: each is a sleep that ended) per second. The health
thread reads this machine's /sys and /proc (its scan of every process, every 5 s, costs more
with more processes: their number is printed).

Usage: threads.py --stagebox BIN [--seconds 20] [--settle 2]
"""
import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import end, start_server, wait_for  # noqa: E402


def threads(pid):
    """{tid: (name, cpu ns, voluntary switches, involuntary switches)} of the process now."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                name = f.read().strip()
            with open(f"{base}/schedstat") as f:
                cpu = int(f.read().split()[0])
            switches = {}
            with open(f"{base}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key.endswith("ctxt_switches"):
                        switches[key] = int(value)
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended between the listing and the read
        out[int(tid)] = (name, cpu, switches["voluntary_ctxt_switches"], switches["nonvoluntary_ctxt_switches"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stagebox", required=True)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--settle", type=float, default=2.0)
    a = ap.parse_args()
    tmp, sock, argv, server = start_server(a.stagebox, "stagebox-threads-", '\n[clock]\nfile = "TMP/clock"\n')
    ok = False
    try:
        wait_for("the bus socket appeared", lambda: os.path.exists(sock), [(argv, server)])
        time.sleep(a.settle)
        before, t0 = threads(server.pid), time.monotonic()
        time.sleep(a.seconds)
        after, t1 = threads(server.pid), time.monotonic()
        processes = sum(1 for e in os.listdir("/proc") if e.isdigit())
        ok = True
    finally:
        end(server)
        if ok:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"threads.py: its files are in {tmp}", file=sys.stderr)

    span = t1 - t0
    print(f"Threads of `stagebox run --simulate` ({a.stagebox}), idle for {span:.1f} s, no client, "
          f"{processes} processes on this machine; CPU in % of one core, wakeups a second:")
    print(f"  {'thread':20}{'CPU %':>10}{'wakeups/s':>12}{'preempted/s':>13}")
    total = [0.0, 0.0, 0.0]
    for tid in sorted(after, key=lambda t: after[t][0]):
        if tid not in before:
            continue
        name, cpu, vol, invol = after[tid]
        _, cpu0, vol0, invol0 = before[tid]
        row = [(cpu - cpu0) / span / 1e7, (vol - vol0) / span, (invol - invol0) / span]
        total = [x + y for x, y in zip(total, row)]
        print(f"  {name:20}{row[0]:10.3f}{row[1]:12.1f}{row[2]:13.1f}")
    print(f"  {'all':20}{total[0]:10.3f}{total[1]:12.1f}{total[2]:13.1f}")


if __name__ == "__main__":
    main()
