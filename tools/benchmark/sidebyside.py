#!/usr/bin/env python3
"""Stagebox, jackd and PipeWire side by side on the same work, interleaved round by round.

Run through tools/bench, which installs and builds what this needs. Prints the table on stdout
and writes table.txt, results.json and plot.png into --out.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procstat  # noqa: E402
import systems  # noqa: E402
from coldstart import cold_start  # noqa: E402
from instructions import instructions_per_period, jackd_per_period  # noqa: E402
from stalls import line as floor_line, machine_floor  # noqa: E402

WORKLOADS = {
    # name: (senders, recorders, filters, inputs-to-outputs path), what it is
    "a": ((0, 0, 0, True), "the loop alone, inputs to outputs"),
    "b": ((4, 4, 0, True), "4 senders into the outputs, 4 recorders of the inputs"),
    "c": ((4, 4, 2, True), "(b) plus 2 filters in the inputs-to-outputs path"),
    "d": ((16, 16, 0, True), "32 clients: 16 senders, 16 recorders"),
}


def arguments():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rounds", type=int, default=4, help="an even number: the first and last systems swap places equally")
    p.add_argument("--seconds", type=float, default=15, help="measured seconds per cell")
    p.add_argument("--warmup", type=float, default=2, help="seconds before measuring")
    p.add_argument("--periods", default="64,256")
    p.add_argument("--workloads", default="a,b,c,d")
    p.add_argument("--systems", default="stagebox,stagebox-normal,jackd,pipewire,floor",
                   help="floor: what waking a thread once a period costs (cyclictest), the loop alone only")
    p.add_argument("--no-callgrind", action="store_true")
    p.add_argument("--perf", action="store_true",
                   help="also read perf's task-clock over each window (perf's hooks in every context switch "
                        "add to the schedstat figures of that run)")
    p.add_argument("--out", required=True)
    p.add_argument("--bin", required=True, help="the folder with stagebox, sine_sender, gain_filter, jack_bench_client")
    p.add_argument("--stagebox", help="the stagebox binary to measure (server and `record` clients; default: "
                                      "--bin's); tools/bench gives the card's, tools/build-static's")
    return p.parse_args()


def whole_process_lines(b, periods, counted):
    """The loop alone, every thread of the process, stagebox against jackd: user-space
    instructions per period, which the machine's noise does not move. `counted`: stagebox's
    loop-alone counts already made, by period."""
    lines = []
    for period in periods:
        sb = counted.get(period) or instructions_per_period(b, period=period, pairs=0)
        try:
            jack = jackd_per_period(period=period)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            lines.append(f"callgrind: whole process, the loop alone, {period} frames: stagebox "
                         f"{sb['whole_per_period']:,.0f}; jackd not counted ({e})")
            continue
        own = sb["whole_per_period"] - sb["simulated_input_per_period"]
        lines.append(f"callgrind: whole process (every thread, user space), the loop alone, {period} frames: "
                     f"stagebox {sb['whole_per_period']:,.0f} instructions per period "
                     f"({sb['whole_per_period'] / jack['whole_per_period']:.2f}x jackd; "
                     f"{own:,.0f} and {own / jack['whole_per_period']:.2f}x without the simulated board's "
                     f"input signal, {sb['simulated_input_per_period']:,.0f}), jackd "
                     f"{jack['whole_per_period']:,.0f} (dummy driver) over {jack['calls']} periods")
    return lines


def make_systems(names, b):
    made = []
    for n in names:
        if n == "stagebox":
            made.append(systems.Stagebox(True, b))
        elif n == "stagebox-normal":
            made.append(systems.Stagebox(False, b))
        elif n == "jackd":
            made.append(systems.Jack(b["jack_bench_client"]))
        elif n == "pipewire":
            made.append(systems.PipeWire(b["jack_bench_client"]))
        elif n == "floor":
            made.append(systems.WakeupFloor())
        else:
            raise SystemExit(f"sidebyside: unknown system {n} (stagebox, stagebox-normal, jackd, pipewire, floor)")
    return made


def does(system, w):
    """Whether `system` runs workload `w` (the floor: the loop alone only)."""
    return not hasattr(system, "does") or system.does(WORKLOADS[w][0])


def run_cell(system, period, workload, args):
    workdir = tempfile.mkdtemp(prefix="stagebox-bench-")
    cell = systems.Cell(workdir)
    try:
        system.start(cell, period, workload)
        time.sleep(args.warmup)
        system.measuring(cell)
        pids = [cell.server.pid] + [c.pid for c in cell.clients]
        before = procstat.Sample(pids)
        t0 = time.monotonic()
        if args.perf:
            task_clock = procstat.task_clock(pids, args.seconds)
        else:
            task_clock = None
            time.sleep(args.seconds)
        after = procstat.Sample(pids)
        seconds = time.monotonic() - t0
        ended_early = [c for c in cell.clients if c.poll() is not None]
        figures = system.stop(cell)
        cpu, switches, per_thread = procstat.difference(before, after, pids)
        server_cpu, _, _ = procstat.difference(before, after, [cell.server.pid])
        if getattr(system, "worker_thread_only", False):
            cpu = server_cpu = procstat.worker_thread_cpu(before, after, cell.server.pid)
            task_clock = None  # perf counted the whole process: not the floor's one thread
        periods = seconds * systems.RATE / period
        figures.update({
            "cpu_percent": 100 * cpu / seconds,
            "task_clock_percent": None if task_clock is None else 100 * task_clock / seconds,
            "server_cpu_percent": 100 * server_cpu / seconds,
            "switches_per_period": switches / periods,
            "rss_server_mib": after.rss.get(cell.server.pid, 0) / 1024,
            "rss_total_mib": sum(after.rss.values()) / 1024,
            "clients_ended_early": len(ended_early),
            "server_threads": {f"{name}": n / seconds for (pid, tid, name), n in per_thread.items()
                               if pid == cell.server.pid},
        })
        return figures
    except Exception as e:  # a cell that fails is reported, the others still run
        for p in [cell.server] + cell.clients + cell.helpers:
            if p and p.poll() is None:
                p.kill()
        return {"error": str(e)}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"


def table(results, system_names, periods, workloads):
    lines = []
    head = (f"{'work':<5}{'period':>7}  {'system':<28}{'CPU %':>7}{'× sb':>7}{'perf %':>8}{'perf×sb':>8}"
            f"{'server %':>9}{'cs/period':>10}"
            f"{'xruns':>7}{'cycle p50':>10}{'p99':>8}{'max µs':>9}{'>¼ T':>6}{'RSS srv':>9}{'RSS all':>9}")
    lines.append(head)
    lines.append("-" * len(head))
    for w in workloads:
        for period in periods:
            base = median([r.get("cpu_percent") for r in results.get(("stagebox", period, w), [])])
            perf_base = median([r.get("task_clock_percent") for r in results.get(("stagebox", period, w), [])])
            for s in system_names:
                runs = results.get((s, period, w), [])
                ok = [r for r in runs if "error" not in r]
                if not runs and s == systems.WakeupFloor.name:
                    continue  # measured for the loop alone only
                if not ok:
                    err = runs[0]["error"] if runs else "not run"
                    lines.append(f"{w:<5}{period:>7}  {s:<28}failed: {err}")
                    continue
                m = {k: median([r.get(k) for r in ok]) for k in
                     ("cpu_percent", "task_clock_percent", "server_cpu_percent", "switches_per_period", "cycle_median_us", "cycle_p99_us",
                      "cycle_max_us", "cycles_over_quarter", "rss_server_mib", "rss_total_mib")}
                xr = max(r.get("xruns", 0) or 0 for r in ok) if any("xruns" in r for r in ok) else None
                ratio = m["cpu_percent"] / base if base else None
                perf = m["task_clock_percent"]
                perf_ratio = perf / perf_base if perf is not None and perf_base else None
                lines.append(f"{w:<5}{period:>7}  {s:<28}{fmt(m['cpu_percent'], 2):>7}{fmt(ratio, 2):>7}"
                             f"{fmt(perf, 2):>8}{fmt(perf_ratio, 2):>8}"
                             f"{fmt(m['server_cpu_percent'], 2):>9}{fmt(m['switches_per_period'], 2):>10}"
                             f"{'—' if xr is None else xr:>7}{fmt(m['cycle_median_us']):>10}{fmt(m['cycle_p99_us']):>8}"
                             f"{fmt(m['cycle_max_us']):>9}{fmt(m['cycles_over_quarter'], 0):>6}"
                             f"{fmt(m['rss_server_mib']):>9}{fmt(m['rss_total_mib']):>9}")
    return "\n".join(lines)


def above_floor(results, system_names, periods):
    """Each system's CPU for the loop alone above what waking once a period costs here."""
    lines = []
    for period in periods:
        floor = median([r.get("cpu_percent") for r in results.get((systems.WakeupFloor.name, period, "a"), [])
                        if "error" not in r])
        if floor is None:
            continue
        above = {s: median([r.get("cpu_percent") for r in results.get((s, period, "a"), []) if "error" not in r])
                 for s in system_names if s != systems.WakeupFloor.name}
        above = {s: v - floor for s, v in above.items() if v is not None}
        jack = above.get("jackd")
        # A ratio only of two figures above the floor: at the floor, the rounds' noise is all there is.
        parts = [f"{s} {v:.2f} %" + (f" ({v / jack:.2f}x jackd)" if jack and jack > 0 and v > 0 and s != "jackd" else "")
                 for s, v in above.items()]
        lines.append(f"the loop alone above the wakeup floor ({floor:.2f} %), {period} frames: " + ", ".join(parts))
    return lines


def thread_table(results, periods):
    lines = ["stagebox's threads, wakeups per second (loop alone; median of the rounds):"]
    for s in ("stagebox", "stagebox (normal priority)"):
        for period in periods:
            runs = [r for r in results.get((s, period, "a"), []) if "error" not in r]
            if not runs:
                continue
            names = sorted({n for r in runs for n in r["server_threads"]})
            parts = [f"{n} {median([r['server_threads'].get(n) for r in runs]):.1f}" for n in names]
            lines.append(f"  {s}, {period} frames: " + ", ".join(parts))
    return "\n".join(lines)


def plot(results, system_names, periods, workloads, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(periods), figsize=(6 * len(periods), 8), squeeze=False)
    width = 0.8 / max(1, len(system_names))
    for col, period in enumerate(periods):
        ax = axes[0][col]
        for i, s in enumerate(system_names):
            ys = [median([r.get("cpu_percent") for r in results.get((s, period, w), []) if "error" not in r]) or 0
                  for w in workloads]
            ax.bar([x + i * width for x in range(len(workloads))], ys, width, label=s)
        ax.set_xticks([x + width * (len(system_names) - 1) / 2 for x in range(len(workloads))])
        ax.set_xticklabels([f"({w})" for w in workloads])
        ax.set_ylabel("CPU, % of one core (server + clients)")
        ax.set_title(f"CPU per workload, {period} frames at 48 kHz")
        ax.legend(fontsize=8)
        ax = axes[1][col]
        labels, p50, p99, mx = [], [], [], []
        for s in system_names:
            for w in workloads:
                ok = [r for r in results.get((s, period, w), []) if "error" not in r and "cycle_median_us" in r]
                if ok:
                    labels.append(f"{s.replace(' (normal priority)', ' normal')} ({w})")
                    p50.append(median([r["cycle_median_us"] for r in ok]))
                    p99.append(median([r["cycle_p99_us"] for r in ok]))
                    mx.append(median([r["cycle_max_us"] for r in ok]))
        xs = range(len(labels))
        ax.bar([x - 0.27 for x in xs], p50, 0.27, label="median")
        ax.bar(list(xs), p99, 0.27, label="p99")
        ax.bar([x + 0.27 for x in xs], mx, 0.27, label="max")
        ax.axhline(period / 48000 * 1e6 * 0.25, color="red", linestyle="--", label="25 % of the period")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("cycle time, µs (log)")
        ax.set_title(f"Cycle times where the system reports them, {period} frames")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    args = arguments()
    os.makedirs(args.out, exist_ok=True)
    b = {n: os.path.join(args.bin, n) for n in ("stagebox", "sine_sender", "gain_filter", "jack_bench_client")}
    if args.stagebox:
        b["stagebox"] = args.stagebox
    chosen = make_systems(args.systems.split(","), b)
    periods = [int(p) for p in args.periods.split(",")]
    workloads = args.workloads.split(",")
    for w in workloads:
        if w not in WORKLOADS:
            raise SystemExit(f"sidebyside: unknown workload {w} (a, b, c, d)")
    names = [s.name for s in chosen]
    results = {}
    cells = args.rounds * len(periods) * sum(1 for w in workloads for s in chosen if does(s, w))
    print(f"bench: {cells} cells ({args.rounds} rounds × {len(periods)} periods × {len(workloads)} workloads × "
          f"{len(chosen)} systems, the floor for the loop alone only), {args.warmup:g} + {args.seconds:g} s each, interleaved, every other round "
          "in the reverse order", file=sys.stderr)
    for round_ in range(args.rounds):
        # Every other round in the reverse order: where a system runs in the round (first, after
        # another's exit, ...) moves its figures by as much as a quarter (found in the VM rig).
        # With an even number of rounds the first and the last swap places equally (with two
        # systems, each has each place equally).
        order = chosen if round_ % 2 == 0 else chosen[::-1]
        for period in periods:
            for w in workloads:
                for s in order:
                    if not does(s, w):
                        continue
                    r = run_cell(s, period, WORKLOADS[w][0], args)
                    if "error" in r:
                        # A cell can fail for the machine's sake (a JACK client that did not
                        # close within 10 s on a loaded machine): one more try, said.
                        print(f"bench: {s.name}, {period} frames, ({w}) failed ({r['error']}); once more",
                              file=sys.stderr)
                        r = run_cell(s, period, WORKLOADS[w][0], args)
                    results.setdefault((s.name, period, w), []).append(r)
                    status = r.get("error") or f"CPU {r['cpu_percent']:.2f} %"
                    print(f"bench: round {round_ + 1}, {period} frames, ({w}), {s.name}: {status}", file=sys.stderr)
    out = [f"Stagebox side by side, 48 kHz, 2 periods, {args.rounds} rounds interleaved, "
           f"{args.seconds:g} s measured per cell; medians; CPU in % of one core per second of audio, from "
           "the threads' schedstat; perf % (with --perf): the same by perf's task-clock over the same window, "
           "which starts once a thread is switched in (on a VM the two part ways).",
           "Workloads: " + "; ".join(f"({w}) {WORKLOADS[w][1]}" for w in workloads),
           f"stagebox: {b['stagebox']}", "",
           table(results, names, periods, workloads)]
    out += above_floor(results, names, periods)
    out += ["", thread_table(results, periods)]
    # What the machine itself does to a real-time thread's cycle, to read the worst cycles by:
    # a probe that works as long as stagebox's busiest median cycle at the smallest period.
    period = min(periods)
    medians = [median([r.get("cycle_median_us") for r in results.get(("stagebox", period, w), [])
                       if "error" not in r]) for w in workloads]
    work = max([m for m in medians if m] or [50.0])
    out += ["", "cycle: stagebox's audio thread, from its wakeup to its period done; >¼ T: cycles longer "
                "than a quarter of the period (the worst-cycle budget)",
            floor_line(machine_floor(period, work, args.seconds))]
    start = cold_start(b["stagebox"])
    out += ["", f"cold start: exec to first period {start['first_period_ms']:.1f} ms (median of {start['runs']}), "
                f"RSS after 1 s {start['rss_mib']:.1f} MiB"]
    if not args.no_callgrind:
        out.append("")
        counted = {}
        try:
            for pairs in (0, 4):
                ir = instructions_per_period(b, pairs=pairs)
                if pairs == 0:
                    counted[ir["period"]] = ir
                what = "the loop alone (codec.in to codec.out)" if pairs == 0 else \
                    f"{2 * pairs} client ports ({pairs} senders, {pairs} receivers)"
                out.append(f"callgrind: Engine.process, {what}, {ir['period']} frames: "
                           f"{ir['per_period']:,.0f} instructions per period over {ir['calls']} periods")
            out += whole_process_lines(b, periods, counted)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:  # the table above is kept
            out.append(f"callgrind: not counted ({e})")
    text = "\n".join(out)
    print(text)
    with open(os.path.join(args.out, "table.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({f"{k[0]}|{k[1]}|{k[2]}": v for k, v in results.items()}, f, indent=1)
    plot(results, names, periods, workloads, os.path.join(args.out, "plot.png"))
    print(f"bench: table and plot in {args.out} (table.txt, plot.png, results.json)", file=sys.stderr)


if __name__ == "__main__":
    main()
