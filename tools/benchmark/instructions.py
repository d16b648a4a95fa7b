"""Instructions per period, counted by valgrind's callgrind: the engine's, and whole processes'.

The simulated board runs under callgrind with 4 senders and 4 recorders connected (those
clients run outside valgrind). Once they are on the bus the counters are zeroed, a few seconds
run, and the counts are dumped: the inclusive instruction count of every call to
`Engine.process` divided by the number of calls. Instruction counts do not depend on how busy
the machine is, which the times of the side-by-side table do.

The whole process (every thread's user-space instructions, the dump's summary) of the loop alone
is counted for stagebox and for jackd on the same work, so that the two can be compared without
the machine's noise: jackd's periods are its dummy driver's cycles. Neither count holds the
kernel's work (wakeups, system calls); the VM rig's `--syscalls` counts the calls.
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
# The simulated board's input signal: the stand-in for a codec's ADC, not the appliance's work.
SIMULATED_INPUT = "$s14StageboxEngine13ToneGeneratorC7process_6frames5cycleyAA11AudioBufferC_SiAA9CycleInfoVtF"
JACK_DUMMY_CYCLE = "Jack::JackDummyDriver::Process()"


def parse(path, function=ENGINE_PROCESS):
    """(calls, inclusive instructions) of every call to `function` in a callgrind dump, by the
    name callgrind wrote (mangled for Swift, demangled for C++). A function the compiler also
    specialised calls its copy (the same name and a `Tf` suffix): counting both would count
    its work twice."""
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
                pending = target == function
                if pending:
                    calls += int(line.split("=", 1)[1].split()[0])
                continue
            if pending:
                fields = line.split()
                if len(fields) >= 2:
                    cost += int(fields[1])
                pending = False
    return calls, cost


def summary(path):
    """Every instruction the dump counted, all threads."""
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no summary line in {path}")


def first_dump(out):
    dumps = sorted(p for p in glob.glob(out + "*") if re.search(r"\.\d+$", p))
    if not dumps:
        raise RuntimeError("callgrind wrote no dump")
    return dumps[0]


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
        dump = first_dump(out)
        calls, cost = parse(dump)
        if calls == 0:
            raise RuntimeError("no call to Engine.process in the dump")
        whole = summary(dump)
        _, simulated = parse(dump, SIMULATED_INPUT) if pairs == 0 else (0, 0)
        return {"calls": calls, "per_period": cost / calls, "period": period, "clients": 2 * pairs,
                "whole_per_period": whole / calls, "simulated_input_per_period": simulated / calls}


def jackd_per_period(period=64, seconds=4):
    """jackd's whole process per period, the loop alone: its dummy driver at 48 kHz, 2 in and
    2 out, capture connected to playback (tools/bench's workload a)."""
    with tempfile.TemporaryDirectory(prefix="stagebox-callgrind-jackd-") as d:
        name = f"callgrind{os.getpid()}"
        out = os.path.join(d, "callgrind.out")
        with open(os.path.join(d, "jackd.err"), "w") as err:
            server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                       "--dump-instr=no", "jackd", "-n", name, "-r", "-d", "dummy", "-r", "48000",
                                       "-p", str(period), "-C", "2", "-P", "2"],
                                      stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        try:
            def ports():
                r = subprocess.run(["jack_lsp", "-s", name], capture_output=True, text=True)
                return r.stdout.split()
            systems.wait_for(lambda: server.poll() is not None or "system:playback_2" in ports(), 120,
                             "jackd under callgrind")
            if server.poll() is not None:
                with open(os.path.join(d, "jackd.err")) as f:
                    raise RuntimeError(f"jackd under callgrind ended: {f.read().strip()[-300:]}")
            for c in (1, 2):
                subprocess.run(["jack_connect", "-s", name, f"system:capture_{c}", f"system:playback_{c}"],
                               check=True, capture_output=True)
            time.sleep(2)
            subprocess.run(["callgrind_control", "-z", str(server.pid)], check=True, capture_output=True)
            time.sleep(seconds)
            subprocess.run(["callgrind_control", "-d", str(server.pid)], check=True, capture_output=True)
        finally:
            if server.poll() is None:
                server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        dump = first_dump(out)
        calls, _ = parse(dump, JACK_DUMMY_CYCLE)
        if calls == 0:
            raise RuntimeError(f"no call to {JACK_DUMMY_CYCLE} in jackd's dump")
        return {"calls": calls, "whole_per_period": summary(dump) / calls, "period": period}
