#!/usr/bin/env python3
"""Timed sends in plain Python: a line, time.sleep(DELAY), another line.

    python3 py_delay.py PATH DELAY_US N WARMUP

The pairs of pexpect_delay.py without pexpect, with the standard library
alone: open PATH raw, and for I in 0 .. WARMUP+N-1 write "echo aI", sleep
DELAY_US microseconds with time.sleep, write "echo bI" and read until the
reply "bI\\r\\nsim> ". The device measures the accuracy; sleep_ns is how
long time.sleep took, for reference.
"""
import json
import os
import select
import sys
import time
import tty


class Port:
    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd)
        self.buf = b""

    def send(self, text):
        data = text.encode() + b"\n"
        while data:
            data = data[os.write(self.fd, data):]

    def expect(self, want):
        while want not in self.buf:
            r, _, _ = select.select([self.fd], [], [], 10)
            if not r:
                sys.exit("py_delay: no reply %r within 10 s" % want)
            self.buf += os.read(self.fd, 4096)
        self.buf = self.buf[self.buf.index(want) + len(want):]


def main():
    path, delay_us, n, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    delay = delay_us / 1e6
    port = Port(path)
    port.send("echo sync")
    port.expect(b"sync\r\nsim> ")
    slept = []
    for i in range(warmup + n):
        port.send("echo a%d" % i)
        t0 = time.perf_counter_ns()
        time.sleep(delay)
        t1 = time.perf_counter_ns()
        port.send("echo b%d" % i)
        port.expect(b"b%d\r\nsim> " % i)
        if i >= warmup:
            slept.append(t1 - t0)
    json.dump({"sleep_ns": slept, "python": sys.version.split()[0]}, sys.stdout)


if __name__ == "__main__":
    main()
