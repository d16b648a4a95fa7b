"""What the kernel says about a set of processes: CPU time, context switches, memory.

Read from /proc, so that every system is measured the same way, from outside.
"""
import os
import shutil
import subprocess
import time

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
    per_thread = thread_cpu_seconds(pid)
    if per_thread:
        return sum(per_thread.values())
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


def worker_thread_cpu(before, after, pid):
    """CPU seconds, between two samples, of the process's threads other than its main one."""
    old, new = before.thread_cpu.get(pid, {}), after.thread_cpu.get(pid, {})
    return sum(new[t] - old.get(t, new[t]) for t in new if t != pid)


def task_clock(pids, seconds):
    """CPU seconds of the processes' threads over the next `seconds`, by perf's task-clock (its
    own clock, read as each thread is switched in and out), or None without perf. The kernel's
    schedstat counts from the scheduler's pick, so a context switch is in it and not in this:
    on a VM, whose switches cost more, the two part ways."""
    end = time.monotonic() + seconds
    perf = shutil.which("perf")
    result = None
    if perf:
        r = subprocess.run([perf, "stat", "-x,", "-e", "task-clock", "-p", ",".join(str(p) for p in pids),
                            "--", "sleep", str(seconds)], capture_output=True, text=True)
        for line in r.stderr.splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2].split(":")[0] == "task-clock":
                try:
                    result = float(fields[0]) / 1000  # msec
                except ValueError:  # <not supported>, <not counted>
                    pass
    # A perf that failed at once (no permission, a process gone) still leaves the whole window.
    left = end - time.monotonic()
    if left > 0:
        time.sleep(left)
    return result
