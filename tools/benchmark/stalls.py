#!/usr/bin/env python3
"""How long this machine stops a real-time thread while it runs: the floor under any worst
cycle measured here.

A thread at SCHED_FIFO 70 (the bench's audio threads' priority), its memory locked, wakes
every period (48 kHz) and works for a fixed time, reading the clock in a loop, as an audio
cycle of that length would. Its cycle runs from the end of the sleep to the end of the work,
as stagebox times its own. Nothing here waits or calls the kernel inside a cycle, so a cycle
longer than the work is time the machine took away (a hypervisor's other guests, an
interrupt, a kernel that does not preempt): what stagebox's worst cycle cannot go below on
the same machine. Reports the cycles' median, 99th percentile and maximum, how many went
over a quarter of the period, and the largest single gap between two clock reads.

    tools/benchmark/stalls.py [--period 64] [--work-us 50] [--seconds 20]
"""
import argparse
import ctypes
import os
import statistics
import time

RATE = 48000
MCL_CURRENT, MCL_FUTURE = 1, 2


def machine_floor(period=64, work_us=50.0, seconds=20.0, priority=70):
    """Runs the probe in this process's thread and returns its figures (µs), or an "error"."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as e:
        return {"error": f"SCHED_FIFO {priority} refused ({e.strerror})"}
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        libc.mlockall(MCL_CURRENT | MCL_FUTURE)
        return _probe(period, work_us, seconds)
    finally:
        # The caller (tools/bench's driver) goes on to other work: nothing of this stays.
        libc.munlockall()
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def _probe(period, work_us, seconds):
    clock = time.monotonic_ns
    period_ns = period * 1_000_000_000 // RATE
    work_ns = int(work_us * 1000)
    windows = max(1, int(seconds * 1e9 // period_ns))
    cycles = [0] * windows  # the list made before the loop, not grown in it
    gap_max = 0
    start = clock()
    for n in range(windows):
        due = start + (n + 1) * period_ns
        left = due - clock()
        if left > 0:
            time.sleep(left / 1e9)
        t0 = previous = clock()
        now = t0
        while now - t0 < work_ns:
            now = clock()
            if now - previous > gap_max:
                gap_max = now - previous
            previous = now
        cycles[n] = now - t0
    quarter = period_ns / 4
    return {"period": period, "work_us": work_us, "cycles": windows,
            "median_us": statistics.median(cycles) / 1000, "p99_us": sorted(cycles)[max(0, -(-windows * 99 // 100) - 1)] / 1000,
            "max_us": max(cycles) / 1000, "over_quarter": sum(1 for c in cycles if c > quarter),
            "gap_max_us": gap_max / 1000}


def line(f):
    if "error" in f:
        return f"this machine's floor: not measured: {f['error']}"
    return (f"this machine's floor: a SCHED_FIFO thread that works {f['work_us']:g} µs every {f['period']}-frame "
            f"period, {f['cycles']} periods: cycle median {f['median_us']:.1f} µs, p99 {f['p99_us']:.1f} µs, "
            f"max {f['max_us']:.1f} µs, {f['over_quarter']} over a quarter period; the longest the machine "
            f"stopped it: {f['gap_max_us']:.1f} µs")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--period", type=int, default=64, help="frames at 48 kHz")
    p.add_argument("--work-us", type=float, default=50, help="the work of each cycle, µs")
    p.add_argument("--seconds", type=float, default=20)
    a = p.parse_args()
    if a.period < 1 or a.work_us <= 0 or a.work_us * 1000 >= a.period * 1e9 / RATE or a.seconds <= 0:
        p.error("--period 1 or more, --work-us above 0 and shorter than the period, --seconds above 0")
    f = machine_floor(a.period, a.work_us, a.seconds)
    print(line(f))
    return 1 if "error" in f else 0


if __name__ == "__main__":
    raise SystemExit(main())
