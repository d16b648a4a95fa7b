"""Instructions per period of the engine with 8 client ports, counted by valgrind's callgrind.

The simulated board runs under callgrind with 4 senders and 4 recorders connected (those
clients run outside valgrind). Once they are on the bus the counters are zeroed, a few seconds
run, and the counts are dumped: the inclusive instruction count of every call to
`Engine.process` divided by the number of calls. Instruction counts do not depend on how busy
the machine is, which the times of the side-by-side table do.
"""
import glob
import os
import re
import signal
import subprocess
import tempfile
import time

import systems

ENGINE_PROCESS = "$s14StageboxEngine0B0C7process6frames5cycleySi_AA9CycleInfoVtF"


def parse(path):
    """(calls, inclusive instructions) of every call to Engine.process in a callgrind dump."""
    names, calls, cost = {}, 0, 0
    target, pending = None, False
    with open(path) as f:
        for line in f:
            m = re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("cfn="):
                    target = names.get(m.group(1))
                continue
            if line.startswith("calls="):
                pending = target == ENGINE_PROCESS
                if pending:
                    calls += int(line.split("=", 1)[1].split()[0])
                continue
            if pending:
                fields = line.split()
                if len(fields) >= 2:
                    cost += int(fields[1])
                pending = False
    return calls, cost


def instructions_per_period(b, period=64, seconds=4, pairs=4):
    """Engine.process's instructions per period with `pairs` senders and as many recorders
    (0: the loop alone, codec.in to codec.out)."""
    with tempfile.TemporaryDirectory(prefix="stagebox-callgrind-") as d:
        socket = os.path.join(d, "bus.sock")
        config = os.path.join(d, "c.toml")
        with open(config, "w") as f:
            f.write(f'[audio]\nperiod = {period}\nrt_priority = 0\n[bus]\nsocket = "{socket}"\n'
                    f'[lifecycle]\nsuspend_after = 0\n[recorder]\ndirectory = "{d}"\n')
            if pairs == 0:
                f.write('[[connect]]\nfrom = "codec.in"\nto = "codec.out"\n')
        out = os.path.join(d, "callgrind.out")
        # Valgrind 3.19 cannot read the DWARF 5 that Swift's compiler writes: a copy without the
        # debug information still has the symbol table, which is all the function names need.
        binary = os.path.join(d, "stagebox")
        subprocess.run(["objcopy", "--strip-debug", b["stagebox"], binary], check=True)
        board = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
                                  binary, "run", "--simulate", "--config", config],
                                 stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "board.err"), "w"),
                                 stdin=subprocess.DEVNULL)
        clients = []
        try:
            systems.wait_for(lambda: os.path.exists(socket), 120, "stagebox under callgrind")
            for i in range(pairs):
                clients.append(subprocess.Popen([b["sine_sender"], socket, f"s{i}", "codec.out"],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                clients.append(subprocess.Popen([b["stagebox"], "record", os.path.join(d, f"r{i}.wav"), "--port",
                                                 f"r{i}.in", "--from", "codec.in", "--socket", socket],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

            def ports():
                r = subprocess.run([b["stagebox"], "ports", "--socket", socket], capture_output=True, text=True)
                return len(re.findall(r"^\s*(?:s|r)\d+\.", r.stdout, re.M))
            systems.wait_for(lambda: ports() >= 2 * pairs, 60, f"{2 * pairs} client ports")
            time.sleep(2)
            subprocess.run(["callgrind_control", "-z", str(board.pid)], check=True, capture_output=True)
            time.sleep(seconds)
            subprocess.run(["callgrind_control", "-d", str(board.pid)], check=True, capture_output=True)
        finally:
            for c in clients:
                c.send_signal(signal.SIGTERM)
            for c in clients:
                c.wait(timeout=20)
            board.send_signal(signal.SIGINT)
            board.wait(timeout=120)
        dumps = sorted(p for p in glob.glob(out + "*") if re.search(r"\.\d+$", p))
        if not dumps:
            raise RuntimeError("callgrind wrote no dump")
        calls, cost = parse(dumps[0])
        if calls == 0:
            raise RuntimeError("no call to Engine.process in the dump")
        return {"calls": calls, "per_period": cost / calls, "period": period, "clients": 2 * pairs}
