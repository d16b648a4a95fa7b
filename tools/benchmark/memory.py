"""Where the appliance's memory goes, by part: `stagebox run --simulate` (the binary given, the
card's static one by default) idle, then with 4 senders and 4 recorders (`stagebox noise`,
`stagebox record`, the same binary), read from /proc/PID/smaps.

The appliance locks its memory (mlockall), so every resident page is one the board never gets
back: the table gives each part's resident and locked MiB. The parts:
  - the binary's code, its read-only data and its writable data (the executable's mappings);
  - each thread's stack, named by the thread whose stack pointer lies in it (read from
    /proc/PID/task/TID/syscall, which needs the same user or root);
  - heap and malloc arenas (anonymous memory that is no thread's stack; the static binary's
    zeroed data, its .bss, is such a mapping too);
  - the client ports' shared rings (memfd and /dev/shm mappings);
  - ALSA's own buffers (/dev/snd mappings) and the rest.
Each client's VmRSS is given too, and how much of it is its own (private pages).

Usage: memory.py --stagebox BIN [--clients 8] [--settle 2]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


def mappings(pid):
    """[(start, end, perms, name, {Rss, Locked} in KiB)] of the process."""
    out = []
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = MAPPING.match(line)
            if m:
                start, end, perms, name = m.groups()
                out.append([int(start, 16), int(end, 16), perms, name, {"Rss": 0, "Locked": 0}])
                continue
            key, _, value = line.partition(":")
            if key in ("Rss", "Locked") and out:
                out[-1][4][key] = int(value.split()[0])
    return out


def thread_stacks(pid, samples=20):
    """{stack pointer: thread name} of the process's threads, each seen blocked in a system
    call in one of `samples` looks 10 ms apart (a thread on a CPU shows no stack pointer)."""
    out = {}
    for _ in range(samples):
        out.update(_blocked_threads(pid))
        time.sleep(0.01)
    return out


def _blocked_threads(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                fields = f.read().split()
        except OSError:
            continue
        # "NR arg1 … arg6 sp pc" while blocked in a call, "-1 sp pc" while blocked otherwise,
        # "running" on a CPU (no stack pointer then).
        if len(fields) >= 3 and fields[0] != "running":
            out[int(fields[-2], 16)] = name
    return out


def parts(pid):
    """[(part, resident KiB, locked KiB)] of the process, in a fixed order."""
    exe = os.path.realpath(f"/proc/{pid}/exe")
    stacks = thread_stacks(pid)
    totals = {}

    def add(part, usage):
        rss, locked = totals.get(part, (0, 0))
        totals[part] = (rss + usage["Rss"], locked + usage["Locked"])

    maps = mappings(pid)
    # A thread's stack sits right above its guard: one inaccessible page or a few.
    guards = {end for start, end, perms, name, _ in maps if perms == "---p" and name == "" and end - start <= 65536}

    def guarded(start):
        return start in guards

    for start, end, perms, name, usage in maps:
        if name == exe:
            add({"r-xp": "the binary's code", "r--p": "the binary's read-only data"}.get(perms, "the binary's writable data"), usage)
        elif name == "[stack]":
            add("stack: main thread", usage)
        elif name.startswith("/memfd:") or name.startswith("/dev/shm/"):
            add("client ports' shared rings", usage)
        elif name.startswith("/dev/snd/"):
            add("ALSA's buffers", usage)
        elif name in ("", "[heap]"):
            owner = next((n for sp, n in stacks.items() if start <= sp < end), None)
            if owner is None and guarded(start):
                # Or the stack of a thread that ended, which glibc keeps for the next one.
                owner = "(a thread never seen blocked)"
            add(f"stack: {owner}" if owner else "heap and malloc arenas", usage)
        else:
            add("the rest (libraries, vdso, files)", usage)
    fixed = ["the binary's code", "the binary's read-only data", "the binary's writable data",
             "heap and malloc arenas", "client ports' shared rings", "ALSA's buffers"]
    order = fixed + sorted(p for p in totals if p.startswith("stack:")) + ["the rest (libraries, vdso, files)"]
    return [(p, *totals[p]) for p in order if p in totals]


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def private_kib(pid):
    """KiB of the process's own pages (Private_Clean + Private_Dirty): what it adds to the
    board, where its code is the same binary's pages the server has already read."""
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1])
    return total


def wait_for(what, condition, processes, seconds=30):
    """Waits for `condition`; a process of `processes` ([(argv, Popen)]) that exits first is the
    reason it never will, and is named."""
    deadline = time.monotonic() + seconds
    while not condition():
        for argv, p in processes:
            if p.poll() is not None:
                sys.exit(f"memory.py: {' '.join(argv)} exited {p.returncode} before {what}")
        if time.monotonic() > deadline:
            sys.exit(f"memory.py: {what} did not happen within {seconds} s")
        time.sleep(0.1)


def end(p):
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def start_server(stagebox, prefix, more_toml=""):
    """`stagebox run --simulate` in a fresh folder of its own, its bus socket there and no
    console; returns (folder, socket, argv, process). `more_toml`: more configuration."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    sock = f"{tmp}/bus.sock"
    config = f"{tmp}/stagebox.toml"
    with open(config, "w") as f:
        f.write(f'[console]\ndevice = "none"\n\n[bus]\nsocket = "{sock}"\n\n[recorder]\ndirectory = "{tmp}/takes"\n'
                + more_toml.replace("TMP", tmp))
    os.makedirs(f"{tmp}/takes")
    argv = [stagebox, "run", "--simulate", "--config", config]
    with open(f"{tmp}/stagebox.log", "w") as log:
        server = subprocess.Popen(argv, stdout=log, stderr=log)
    return tmp, sock, argv, server


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stagebox", required=True)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--settle", type=float, default=2.0)
    a = ap.parse_args()
    tmp, sock, server_argv, server = start_server(a.stagebox, "stagebox-memory-")
    clients = []
    ok = False
    try:
        wait_for("the bus socket appeared", lambda: os.path.exists(sock), [(server_argv, server)])
        time.sleep(a.settle)
        idle = parts(server.pid)
        idle_total = vm_rss_kib(server.pid)
        senders = a.clients // 2
        for i in range(a.clients):
            if i < senders:
                argv = [a.stagebox, "noise", "--socket", sock, "--port", f"noise{i}.out", "--to", "codec.out"]
            else:
                argv = [a.stagebox, "record", "--socket", sock, f"{tmp}/r{i}.wav", "--port", f"rec{i}.in",
                        "--from", "codec.in", "--encoding", "PCM_16"]
            clients.append((argv, subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))

        def all_ports():
            r = subprocess.run([a.stagebox, "ports", "--socket", sock], capture_output=True, text=True)
            return sum(1 for i in range(a.clients) if (f"noise{i}.out" if i < senders else f"rec{i}.in") in r.stdout) == a.clients

        wait_for(f"{a.clients} client ports were on the bus", all_ports, [(server_argv, server)] + clients)
        time.sleep(a.settle)
        busy = dict((p, (r, l)) for p, r, l in parts(server.pid))
        busy_total = vm_rss_kib(server.pid)
        client_rss = {}
        for argv, p in clients:
            client_rss.setdefault(argv[1], []).append((vm_rss_kib(p.pid) / 1024, private_kib(p.pid) / 1024))
        ok = True
    finally:
        for _, p in clients:
            end(p)
        end(server)
        if ok:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"memory.py: its files are in {tmp}", file=sys.stderr)

    mib = lambda k: f"{k / 1024:7.1f}"
    print(f"Memory of `stagebox run --simulate` ({a.stagebox}), MiB resident (locked), "
          f"idle and with {a.clients} clients ({senders} noise senders, {a.clients - senders} recorders):")
    print(f"  {'part':36}{'idle':>18}{'clients':>18}")
    names = [p for p, _, _ in idle] + [p for p in busy if p not in {q for q, _, _ in idle}]
    idle_d = {p: (r, l) for p, r, l in idle}
    for p in names:
        i, b = idle_d.get(p, (0, 0)), busy.get(p, (0, 0))
        print(f"  {p:36}{mib(i[0])} ({mib(i[1])}){mib(b[0])} ({mib(b[1])})")
    print(f"  {'total (VmRSS)':36}{mib(idle_total)}{'':10}{mib(busy_total)}")
    if sum(l for _, _, l in idle) == 0:
        print("  (nothing locked: mlockall was refused)")
    for kind, values in client_rss.items():
        rss, own = [v[0] for v in values], [v[1] for v in values]
        print(f"  each `stagebox {kind}` client: {min(rss):.1f}-{max(rss):.1f} MiB resident, "
              f"{min(own):.1f}-{max(own):.1f} MiB of it its own (the rest the binary's pages the server shares)")
    print("  (the target: at most 24 MiB resident idle and with 8 clients, each client at most 8 MiB;"
          " locked is counted proportionally: pages the clients share, the same binary's, count in part)")


if __name__ == "__main__":
    main()
