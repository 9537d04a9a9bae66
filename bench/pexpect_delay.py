#!/usr/bin/env python3
"""Timed sends with pexpect: a line, time.sleep(DELAY), another line.

    python3 pexpect_delay.py PATH DELAY_US N WARMUP

For I in 0 .. WARMUP+N-1: sends "echo aI", sleeps DELAY_US microseconds with
time.sleep, sends "echo bI" and waits for the reply "bI\\r\\nsim> " so that
the next pair starts from a quiet line. The accuracy is measured on the
device, which timestamps each line it receives; this script only reports
how long time.sleep itself took (sleep_ns), for reference.
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


def main():
    path, delay_us, n, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    delay = delay_us / 1e6
    child = open_device(path, 10)
    child.sendline(b"echo sync")
    child.expect_exact(b"sync\r\nsim> ")
    slept = []
    for i in range(warmup + n):
        child.sendline(b"echo a%d" % i)
        t0 = time.perf_counter_ns()
        time.sleep(delay)
        t1 = time.perf_counter_ns()
        child.sendline(b"echo b%d" % i)
        child.expect_exact(b"b%d\r\nsim> " % i)
        if i >= warmup:
            slept.append(t1 - t0)
    child.close()
    json.dump({"sleep_ns": slept, "python": sys.version.split()[0],
               "pexpect": pexpect.__version__}, sys.stdout)


if __name__ == "__main__":
    main()
