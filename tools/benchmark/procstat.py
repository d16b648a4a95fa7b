"""What the kernel says about a set of processes: CPU time, context switches, memory.

Read from /proc, so that every system is measured the same way, from outside.
"""
import os

TICK = os.sysconf("SC_CLK_TCK")


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpu_seconds(pid):
    """Time on a CPU of the process's live threads, in seconds, from their schedstat (in
    nanoseconds: the tick-counted utime + stime of /proc/PID/stat moves in 10 ms steps, too
    coarse for a loop that costs 1 %). Falls back to utime + stime without schedstat."""
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        tids = []
    total, found = 0, False
    for tid in tids:
        fields = _read(f"{base}/{tid}/schedstat").split()
        if fields:
            total += int(fields[0])
            found = True
    if found:
        return total / 1e9
    text = _read(f"/proc/{pid}/stat")
    if not text:
        return 0.0
    # The command name may hold spaces: the fields start after its closing parenthesis.
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def threads(pid):
    """{tid: (name, voluntary + involuntary context switches)} of the live threads."""
    out = {}
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return out
    for tid in tids:
        status = _read(f"{base}/{tid}/status")
        name, switches = "?", 0
        for line in status.splitlines():
            if line.startswith("Name:"):
                name = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "?"
            elif "ctxt_switches:" in line:
                switches += int(line.split()[1])
        out[int(tid)] = (name, switches)
    return out


def thread_cpu_seconds(pid):
    """{tid: seconds on a CPU} of the live threads, from their schedstat."""
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return {}
    out = {}
    for tid in tids:
        fields = _read(f"{base}/{tid}/schedstat").split()
        if fields:
            out[int(tid)] = int(fields[0]) / 1e9
    return out


def rss_kib(pid):
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Sample:
    """One look at a set of processes."""

    def __init__(self, pids):
        self.cpu = {p: cpu_seconds(p) for p in pids}
        self.threads = {p: threads(p) for p in pids}
        self.thread_cpu = {p: thread_cpu_seconds(p) for p in pids}
        self.rss = {p: rss_kib(p) for p in pids}


def difference(before, after, pids):
    """CPU seconds, context switches and {(pid, tid, name): switches} between two samples."""
    cpu = sum(after.cpu.get(p, 0) - before.cpu.get(p, 0) for p in pids)
    per_thread = {}
    for p in pids:
        old = before.threads.get(p, {})
        for tid, (name, n) in after.threads.get(p, {}).items():
            per_thread[(p, tid, name)] = n - old.get(tid, (name, 0))[1]
    return cpu, sum(per_thread.values()), per_thread


def busiest_thread_cpu(before, after, pid):
    """CPU seconds, between two samples, of the process's thread that switched most often."""
    old_switches, new_switches = before.threads.get(pid, {}), after.threads.get(pid, {})
    if not new_switches:
        return 0.0
    tid = max(new_switches, key=lambda t: new_switches[t][1] - old_switches.get(t, ("", 0))[1])
    return after.thread_cpu.get(pid, {}).get(tid, 0.0) - before.thread_cpu.get(pid, {}).get(tid, 0.0)
