"""The systems tools/bench compares, each started the same way and given the same work.

A workload is (senders, recorders, filters, loop): senders write a tone into the outputs,
recorders record the inputs to files, filters sit in the inputs-to-outputs path, and `loop`
says whether that path exists at all. Every system runs at 48 kHz with 2 periods.
"""
import os
import re
import signal
import subprocess
import time

RATE = 48000
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def wait_for(check, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def stop_process(process, sig=signal.SIGTERM, timeout=10):
    """Asks a process to end with `sig`, and kills it when it has not within `timeout` s."""
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()


class Cell:
    """What one system runs for one cell: its server, its clients, and how to stop them."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.server = None
        self.clients = []
        self.helpers = []  # processes that are not part of the work (a JACK xrun watcher)
        self.env = dict(os.environ)

    def spawn(self, argv, log, env=None):
        return subprocess.Popen(argv, stdout=open(os.path.join(self.workdir, log + ".out"), "w"),
                                stderr=open(os.path.join(self.workdir, log + ".err"), "w"),
                                stdin=subprocess.DEVNULL, env=env or self.env, start_new_session=True)

    def run(self, argv, env=None, check=True):
        r = subprocess.run(argv, env=env or self.env, capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.stdout.strip()}")
        return r

    def stop_clients(self):
        for p in self.clients + self.helpers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.clients + self.helpers:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()

    def text(self, log, stream="out"):
        with open(os.path.join(self.workdir, f"{log}.{stream}")) as f:
            return f.read()


class WakeupFloor:
    """What waking one thread once a period costs this machine, with no work at all: rt-tests'
    cyclictest, one thread at SCHED_FIFO 70 with its memory locked, sleeping to each period's
    absolute time (clock_nanosleep) and reading the clock. Only that thread is counted:
    cyclictest's main thread wakes 100 times a second to watch it. `--laptop` keeps it from
    holding /dev/cpu_dma_latency at 0, which would keep the CPUs out of their idle states
    while the floor runs, and the others' cells not. Every system here wakes at
    least once a period, so its CPU above this floor is what its own work costs. The loop alone
    (workload a) only."""
    name = "wakeup floor"
    worker_thread_only = True

    def does(self, workload):
        return workload == (0, 0, 0, True)

    def measuring(self, cell):
        pass

    def start(self, cell, period, workload):
        interval_us = round(period * 1_000_000 / RATE)
        cell.server = cell.spawn(["cyclictest", "--mlockall", "--laptop", "--priority=70", "--threads=1",
                                  f"--interval={interval_us}", "--quiet"], "server")
        wait_for(lambda: len(os.listdir(f"/proc/{cell.server.pid}/task")) >= 2 or cell.server.poll() is not None,
                 10, "cyclictest's thread")
        if cell.server.poll() is not None:
            raise RuntimeError(f"cyclictest ended: {cell.text('server', 'err').strip()[-300:]}")

    def stop(self, cell):
        stop_process(cell.server, signal.SIGINT)
        return {}


class Stagebox:
    name = "stagebox"

    def __init__(self, realtime, binaries):
        self.realtime = realtime
        self.bin = binaries  # {"stagebox": path, "sine_sender": path, "gain_filter": path}
        if not realtime:
            self.name = "stagebox (normal priority)"

    def start(self, cell, period, workload):
        senders, recorders, filters, loop = workload
        self.senders = senders
        socket = os.path.join(cell.workdir, "bus.sock")
        connect = '[[connect]]\nfrom = "codec.in"\nto = "codec.out"\n' if loop and not filters else ""
        config = os.path.join(cell.workdir, "stagebox.toml")
        with open(config, "w") as f:
            f.write(f"""[audio]
rate = {RATE}
period = {period}
periods = 2
rt_priority = 70

[bus]
socket = "{socket}"
# (d)'s 32 clients and the bench's own `stagebox ports` and `connect`: more than the default 32.
max_clients = 64

[lifecycle]
suspend_after = 0

[recorder]
directory = "{cell.workdir}"

{connect}""")
        # At normal priority as a board whose real-time priority is refused runs: SCHED_FIFO asked
        # for and refused (CAP_SYS_NICE dropped), so the audio thread falls back to nice 0.
        refused = [] if self.realtime else ["setpriv", "--inh-caps", "-sys_nice", "--bounding-set", "-sys_nice"]
        cell.server = cell.spawn(refused + [self.bin["stagebox"], "run", "--simulate", "--config", config], "server")
        wait_for(lambda: os.path.exists(socket), 10, "the stagebox bus socket")
        for i in range(senders):
            cell.clients.append(cell.spawn([self.bin["sine_sender"], socket, f"s{i}", "codec.out"], f"s{i}"))
        for i in range(recorders):
            cell.clients.append(cell.spawn([self.bin["stagebox"], "record", os.path.join(cell.workdir, f"r{i}.wav"),
                                            "--port", f"r{i}.in", "--from", "codec.in", "--socket", socket,
                                            "--encoding", "FLOAT"], f"r{i}"))
        for i in range(filters):
            cell.clients.append(cell.spawn([self.bin["gain_filter"], socket, f"f{i}", "0"], f"f{i}"))
        if filters:
            wait_for(lambda: all("ready" in cell.text(f"f{i}") for i in range(filters)), 10, "the filters")
            chain = ["codec.in"] + [f"f{i}.fx" for i in range(filters)] + ["codec.out"]
            for a, b in zip(chain, chain[1:]):
                cell.run([self.bin["stagebox"], "connect", a, b, "--socket", socket])
        wait_for(lambda: self._ports(cell, socket) >= senders + recorders + filters, 15, "the clients' ports")
        self.socket = socket

    def measuring(self, cell):
        """The warm-up is over: the cycle statistics start again from here."""
        r = subprocess.run([self.bin["stagebox"], "console", "--socket", self.socket], input="reset-stats\n",
                           capture_output=True, text=True, timeout=10)
        if "unknown command" in r.stdout or r.returncode != 0:
            raise RuntimeError(f"reset-stats on the console: {r.stdout.strip()} {r.stderr.strip()}")

    def _ports(self, cell, socket):
        r = cell.run([self.bin["stagebox"], "ports", "--socket", socket], check=False)
        return len(re.findall(r"^\s*(?:s|r|f)\d+\.", r.stdout, re.M))

    def stop(self, cell):
        cell.stop_clients()
        cell.server.send_signal(signal.SIGINT)
        cell.server.wait(timeout=20)
        text = cell.text("server") + cell.text("server", "err")
        figures = {}
        m = re.search(r"xruns: capture=(\d+) playback=(\d+)", text)
        if m:
            figures["xruns"] = int(m.group(1)) + int(m.group(2))
        for key in ("median", "p99", "max"):
            m = re.search(rf"cycle: .*?\b{key}=([\d.]+) µs", text)
            if m:
                figures[f"cycle_{key}_us"] = float(m.group(1))
        m = re.search(r"over-quarter-period=(\d+)", text)
        if m:
            figures["cycles_over_quarter"] = int(m.group(1))
        figures["client_underruns"] = sum(int(n) for i in range(self.senders)
                                          for n in re.findall(r"underruns (\d+)", cell.text(f"s{i}")))
        return figures


class Jack:
    name = "jackd"

    def measuring(self, cell):
        pass

    def __init__(self, client_binary, realtime=True):
        self.client = client_binary
        self.realtime = realtime
        self.server_name = f"bench{os.getpid()}"

    def prefix(self, cell):
        return []

    def ports(self, cell):
        r = cell.run(self.prefix(cell) + ["jack_lsp"], check=False)
        return r.stdout.split()

    def start_server(self, cell, period):
        cell.env["JACK_DEFAULT_SERVER"] = self.server_name
        rt = ["-R", "-P", "70"] if self.realtime else ["-r"]
        cell.server = cell.spawn(["jackd", "-n", self.server_name] + rt + ["-d", "dummy", "-r", str(RATE),
                                  "-p", str(period), "-C", "2", "-P", "2"], "server")
        wait_for(lambda: "system:playback_1" in self.ports(cell), 10, "jackd")
        self.capture, self.playback = ["system:capture_1", "system:capture_2"], ["system:playback_1", "system:playback_2"]

    def start(self, cell, period, workload):
        senders, recorders, filters, loop = workload
        self.start_server(cell, period)
        pre = self.prefix(cell)
        watcher = cell.spawn(pre + [self.client, "watch", "watch"], "watch")
        cell.helpers.append(watcher)
        for i in range(senders):
            cell.clients.append(cell.spawn(pre + [self.client, "sine", f"s{i}"] + self.playback, f"s{i}"))
        for i in range(recorders):
            cell.clients.append(cell.spawn(pre + ["jack_rec", "-f", os.path.join(cell.workdir, f"r{i}.wav"),
                                                  "-d", "600", "-b", "32", "-B", "65536"] + self.capture, f"r{i}"))
        for i in range(filters):
            cell.clients.append(cell.spawn(pre + [self.client, "thru", f"f{i}"], f"f{i}"))
        wait_for(lambda: "ready" in cell.text("watch"), 10, "the xrun watcher")
        if filters:
            wait_for(lambda: all("ready" in cell.text(f"f{i}") for i in range(filters)), 10, "the filters")
            stages = [self.capture] + [[f"f{i}:in_1", f"f{i}:in_2"] for i in range(filters)]
            outs = [self.capture] + [[f"f{i}:out_1", f"f{i}:out_2"] for i in range(filters)]
            for i in range(filters):
                for c in range(2):
                    cell.run(pre + ["jack_connect", outs[i][c], stages[i + 1][c]])
            for c in range(2):
                cell.run(pre + ["jack_connect", outs[-1][c], self.playback[c]])
        elif loop:
            for c in range(2):
                cell.run(pre + ["jack_connect", self.capture[c], self.playback[c]])
        wait_for(lambda: sum(1 for p in self.ports(cell) if re.match(r"(s|f)\d+:|r\d+", p)) >= 2 * (senders + 2 * filters)
                 and all("ready" in cell.text(f"s{i}") for i in range(senders)), 15, "the clients")

    def stop(self, cell):
        # The watcher first, to read its count; then the clients; then the server.
        watcher = cell.helpers[0]
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=10)
        cell.stop_clients()
        figures = {}
        m = re.search(r"xruns=(\d+) dsp-load-max=([\d.]+)", cell.text("watch"))
        if m:
            figures["xruns"] = int(m.group(1))
            figures["dsp_load_max"] = float(m.group(2))
        self.stop_server(cell)
        return figures

    def stop_server(self, cell):
        stop_process(cell.server)


class PipeWire(Jack):
    """PipeWire with two null nodes as the board's codec (a source whose monitor ports are the
    inputs, a sink that drives the graph), the quantum forced to the period, the same libjack
    clients through pw-jack. No session manager: the links are made with jack_connect."""
    name = "pipewire"

    def __init__(self, client_binary, realtime=True):
        super().__init__(client_binary, realtime=realtime)

    def prefix(self, cell):
        return ["pw-jack"]

    def write_config(self, cell, period):
        with open("/usr/share/pipewire/pipewire.conf") as f:
            conf = f.read()
        conf = conf.replace("context.properties = {", f"""context.properties = {{
    default.clock.rate = {RATE}
    default.clock.quantum = {period}
    default.clock.min-quantum = {period}
    default.clock.max-quantum = {period}
    default.clock.force-quantum = {period}
    support.dbus = false""", 1)
        node = """    {{ factory = adapter
      args = {{ factory.name = support.null-audio-sink node.name = {name} node.description = {name}
               media.class = Audio/Sink audio.position = [ FL FR ] audio.rate = {rate}
               node.driver = true priority.driver = {prio} monitor.channel-volumes = false
               adapter.auto-port-config = {{ mode = dsp monitor = {monitor} position = preserve }} }} }}
"""
        objects = node.format(name="board_in", rate=RATE, prio=20000, monitor="true") + \
            node.format(name="board_out", rate=RATE, prio=30000, monitor="false")
        conf = conf.replace("context.objects = [", "context.objects = [\n" + objects, 1)
        rt = "rt.prio = 70" if self.realtime else "rt.prio = 0 nice.level = 0"
        conf = re.sub(r"(name = libpipewire-module-rt\s*\n\s*args = \{)", r"\1 " + rt, conf, count=1)
        confdir = os.path.join(cell.workdir, "pwconf")
        os.makedirs(confdir, exist_ok=True)
        with open(os.path.join(confdir, "pipewire.conf"), "w") as f:
            f.write(conf)
        return confdir

    def start_server(self, cell, period):
        runtime = os.path.join(cell.workdir, "pwrun")
        os.makedirs(runtime, exist_ok=True)
        cell.env["XDG_RUNTIME_DIR"] = runtime
        cell.env.pop("JACK_DEFAULT_SERVER", None)
        env = dict(cell.env, PIPEWIRE_CONFIG_DIR=self.write_config(cell, period))
        cell.server = cell.spawn(["pipewire"], "server", env=env)
        wait_for(lambda: "board_out:playback_FL" in self.ports(cell), 10, "pipewire")
        self.capture, self.playback = ["board_in:monitor_FL", "board_in:monitor_FR"], ["board_out:playback_FL", "board_out:playback_FR"]
        # The inputs' node runs only when linked into the graph; the loop or the recorders link it.
