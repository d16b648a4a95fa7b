"""Stagebox's cold start: from exec to its first period, and its memory once running.

`stagebox run` logs the monotonic time of its first processed period; the clock is the
system's, so the time taken just before the exec is comparable.
"""
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time

import procstat


def cold_start(stagebox, runs=5):
    times, rss = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="stagebox-cold-") as d:
            config = os.path.join(d, "c.toml")
            with open(config, "w") as f:
                f.write(f'[audio]\nperiod = 64\nrt_priority = 70\n[bus]\nsocket = "{d}/bus.sock"\n'
                        f'[recorder]\ndirectory = "{d}"\n')
            t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            p = subprocess.Popen([stagebox, "run", "--simulate", "--config", config], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
            time.sleep(1)
            rss.append(procstat.rss_kib(p.pid) / 1024)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=20)
            m = re.search(r"first period processed at monotonic ([\d.]+) s", err)
            if not m:
                raise RuntimeError(f"no first-period line in stagebox's log:\n{err[-800:]}")
            times.append(float(m.group(1)) * 1000 - t0 / 1e6)
    return {"first_period_ms": statistics.median(times), "rss_mib": statistics.median(rss), "runs": runs,
            "all_ms": times}
