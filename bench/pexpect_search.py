#!/usr/bin/env python3
"""Wait with pexpect for a pattern at the end of a long stream.

    python3 pexpect_search.py PATH SIZE MODE PATTERN LIMIT_S

Asks the board for SIZE bytes ("stream SIZE") and waits for PATTERN, which
only appears at the very end: with expect_exact when MODE is "exact"
(PATTERN is a literal with \\r, \\n and \\\\ escapes), with expect (a regular
expression, pexpect's usual call) when MODE is "regex". Default pexpect
settings: maxread 2000, no searchwindowsize. Gives up after LIMIT_S
seconds. Prints one JSON object: done, seconds (from the send to the match
or to giving up), bytes (received after the send) and progress, pairs of
[seconds, bytes] about once a second.
"""
import codecs
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


class Counter:
    """A logfile_read that counts bytes and samples progress."""

    def __init__(self):
        self.n = 0
        self.t0 = time.perf_counter()
        self.next = 1.0
        self.progress = []

    def write(self, data):
        self.n += len(data)
        t = time.perf_counter() - self.t0
        if t >= self.next:
            self.progress.append([round(t, 3), self.n])
            self.next = t + 1.0

    def flush(self):
        pass


def main():
    path, size, mode, pattern, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
    child = open_device(path, limit)
    child.sendline(b"echo sync")
    child.expect_exact(b"sync\r\nsim> ")
    if mode == "exact":
        want = codecs.decode(pattern, "unicode_escape").encode("latin-1")
    elif mode == "regex":
        want = pattern.encode()
    else:
        sys.exit("unknown mode %r (want exact or regex)" % mode)
    counter = Counter()
    child.logfile_read = counter
    t0 = time.perf_counter()
    child.sendline(b"stream %d" % size)
    done = True
    try:
        if mode == "exact":
            child.expect_exact(want, timeout=limit)
        else:
            child.expect(want, timeout=limit)
    except pexpect.TIMEOUT:
        done = False
    t1 = time.perf_counter()
    child.logfile_read = None
    json.dump({"done": done, "seconds": t1 - t0, "bytes": counter.n,
               "progress": counter.progress, "python": sys.version.split()[0],
               "pexpect": pexpect.__version__}, sys.stdout)


if __name__ == "__main__":
    main()
