"""The host's end of the emulated Pi's serial cable (tools/image/boot-pi --execute).

    pi-console.py SOCKET QEMU_PID TIMEOUT LOG 'LINE;LINE' KILL_AFTER

Connects to QEMU's UART socket, keeps everything the Pi sends in LOG, waits for stagebox's
console prompt, types each LINE as a person would (one at a time, each after the previous
answer's prompt), prints the answers, then waits KILL_AFTER seconds more (the caller then
cuts the power). Says when (seconds from power-on: this program's start, right after QEMU's)
the Pi first said anything and when stagebox's console came up. A LINE may also be
    @wait TEXT   wait until TEXT shows (a reboot: "@wait Stagebox console." again)
    @sleep S     wait S seconds
    @running     `status` every 0.5 s until the engine has processed a period, said with
                 its time from power-on
    @recorded S  `status` every 0.5 s until the take being recorded is S seconds long
    @until TEXT|LINE   LINE every second until its answer holds TEXT; the last answer printed

Exit status: 0 the lines were answered; 3 QEMU exited first; 4 TIMEOUT passed first.
"""
import os
import re
import socket
import sys
import time

PROMPT = b"stagebox> "


def main() -> int:
    path, qemu, timeout, log_path, lines, linger = sys.argv[1:7]
    qemu, deadline, t0 = int(qemu), time.monotonic() + float(timeout), time.monotonic()
    log = open(log_path, "wb")
    seen = bytearray()

    def alive() -> bool:
        try:
            os.kill(qemu, 0)
            return True
        except ProcessLookupError:
            return False

    sock = None
    while sock is None:
        if not alive():
            return 3
        if time.monotonic() > deadline:
            return 4
        try:
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(path)
        except OSError:
            sock = None
            time.sleep(0.05)
    sock.settimeout(0.2)
    first_output = None

    def read_until(marker: bytes, start: int) -> int:
        """Reads until MARKER appears after START in what was seen; returns its end."""
        nonlocal first_output
        while True:
            at = seen.find(marker, start)
            if at >= 0:
                return at + len(marker)
            if time.monotonic() > deadline:
                raise TimeoutError
            if not alive():
                raise ProcessLookupError
            try:
                data = sock.recv(4096)
            except socket.timeout:
                continue
            if not data:
                raise ProcessLookupError
            if first_output is None:
                first_output = time.monotonic() - t0
            seen.extend(data)
            log.write(data)
            log.flush()

    def ask(line: str, at: int) -> tuple[str, int]:
        """Types LINE at the prompt standing at AT; returns its answer and the next prompt's end."""
        sock.sendall(line.encode() + b"\r")
        end = read_until(PROMPT, at)
        answer = seen[at:end - len(PROMPT)].decode(errors="replace").replace("\r", "")
        return (answer.split("\n", 1)[1] if "\n" in answer else ""), end  # less the echoed line

    def say(text: str) -> None:
        print(f"pi-console: {text} ({time.monotonic() - t0:.1f} s after power-on)", file=sys.stderr)

    try:
        at = read_until(b"Stagebox console.", 0)
        say(f"first output after {first_output:.1f} s; stagebox's console up")
        at = read_until(PROMPT, at)
        ready = True  # a prompt stands at `at`: a line may be typed
        for line in [x.strip() for x in lines.split(";") if x.strip()]:
            if line.startswith("@wait "):
                text = line[len("@wait "):]
                at, ready = read_until(text.encode(), at), False
                say(f"saw {text!r}")
                continue
            if line.startswith("@sleep "):
                time.sleep(float(line.split()[1]))
                continue
            if not ready:
                at = read_until(PROMPT, at)
            if line.startswith("@recorded "):
                # status until the take being recorded is at least S seconds long.
                want = float(line.split()[1])
                while True:
                    answer, at = ask("status", at)
                    took = re.search(r"recording [^:]*: ([0-9.]+) s", answer)
                    if took and float(took.group(1)) >= want:
                        say(f"the take is {took.group(1)} s long")
                        break
                    time.sleep(0.5)
            elif line.startswith("@until "):
                text, typed = line[len("@until "):].split("|", 1)
                while True:
                    answer, at = ask(typed, at)
                    if text in answer:
                        break
                    time.sleep(1)
                print(f"stagebox> {typed}\n{answer}", end="" if answer.endswith("\n") else "\n")
            elif line == "@running":
                # status until the engine has processed a period: power-on to audio.
                while True:
                    answer, at = ask("status", at)
                    periods = re.search(r"(\d+) periods", answer)
                    if periods and int(periods.group(1)) > 0:
                        say(f"audio running: {periods.group(1)} periods processed")
                        break
                    time.sleep(0.5)
            else:
                answer, at = ask(line, at)
                print(f"stagebox> {line}\n{answer}", end="" if answer.endswith("\n") else "\n")
            ready = True
        stop = time.monotonic() + float(linger)
        while time.monotonic() < stop and alive():
            try:
                data = sock.recv(4096)
                log.write(data)
            except socket.timeout:
                pass
        return 0
    except TimeoutError:
        print(f"pi-console: timed out; the last the Pi said: {bytes(seen[-300:]).decode(errors='replace')!r}",
              file=sys.stderr)
        return 4
    except ProcessLookupError:
        return 3


if __name__ == "__main__":
    sys.exit(main())
