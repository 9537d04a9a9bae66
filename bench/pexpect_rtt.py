#!/usr/bin/env python3
"""Send/expect round trips with pexpect on a serial device path.

    python3 pexpect_rtt.py PATH N WARMUP

Opens PATH the way a pexpect user opens a serial port (os.open, raw mode,
fdpexpect.fdspawn), then WARMUP + N times sends "echo ping-I" and waits with
expect_exact for the board's reply "ping-I\\r\\nsim> ". Prints one JSON
object: samples_ns holds the N measured round trips in nanoseconds
(time.perf_counter_ns around send and expect).
"""
import json
import os
import sys
import time
import tty

import pexpect
from pexpect import fdpexpect


def open_device(path, timeout):
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    return fdpexpect.fdspawn(fd, timeout=timeout)


def sync(child):
    child.sendline(b"echo sync")
    child.expect_exact(b"sync\r\nsim> ")


def main():
    path, n, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    child = open_device(path, 10)
    sync(child)
    samples = []
    for i in range(warmup + n):
        want = b"ping-%d\r\nsim> " % i
        t0 = time.perf_counter_ns()
        child.sendline(b"echo ping-%d" % i)
        child.expect_exact(want)
        t1 = time.perf_counter_ns()
        if i >= warmup:
            samples.append(t1 - t0)
    child.close()
    json.dump({"samples_ns": samples, "python": sys.version.split()[0],
               "pexpect": pexpect.__version__}, sys.stdout)


if __name__ == "__main__":
    main()
