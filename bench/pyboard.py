#!/usr/bin/env python3
"""A board that is not hilrun's: a small shell on a pty, in Python 3.

    python3 pyboard.py [--fifo]

Opens a pty, makes its slave raw and prints one JSON line on stdout,
{"path": SLAVE, "offset_ns": time.time_ns() - time.monotonic_ns()}, then
serves the slave's peer until its standard input ends:

  - a line is ended by CR or LF (the LF of a CRLF is dropped); each is
    stamped with time.monotonic_ns() when the read that holds its end
    returned, and "echo TEXT" is answered "TEXT\\r\\nsim> ", any other
    non-empty line "unknown command\\r\\nsim> ", an empty one "sim> ";
  - each reply is stamped when the write that finished it returned;
  - "dump" on standard input prints one JSON line on stdout: {"rx":
    [[ns, line], ...], "tx": [[ns, index of the line answered], ...],
    "fifo": bool}, everything since the start.

--fifo reads at SCHED_FIFO priority 20 when the process may (as the Go
board reads with RealtimeRx). The board pins itself to no CPU. Standard
library only.
"""
import json
import os
import select
import sys
import time
import tty

PROMPT = b"sim> "


def raise_priority():
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(20))
        return True
    except (AttributeError, OSError):
        return False


class Board:
    def __init__(self, master):
        self.master = master
        self.line = bytearray()
        self.last_cr = False
        self.rx = []
        self.tx = []

    def write(self, data):
        view = memoryview(data)
        while view:
            try:
                k = os.write(self.master, view)
            except BlockingIOError:
                select.select([], [self.master], [])
                continue
            view = view[k:]

    def answer(self, text, index):
        if text.startswith("echo "):
            reply = text[5:].encode() + b"\r\n" + PROMPT
        elif text == "echo":
            reply = b"\r\n" + PROMPT
        elif text == "":
            reply = PROMPT
        else:
            reply = b"unknown command\r\n" + PROMPT
        self.write(reply)
        self.tx.append([time.monotonic_ns(), index])

    def input(self, data, at):
        for c in data:
            if c == 0x0A and self.last_cr:
                self.last_cr = False
                continue
            if c in (0x0D, 0x0A):
                self.last_cr = c == 0x0D
                text = self.line.decode("utf-8", "replace")
                self.line.clear()
                self.rx.append([at, text])
                self.answer(text, len(self.rx) - 1)
                continue
            self.last_cr = False
            if len(self.line) < 4096:
                self.line.append(c)


def main():
    fifo = raise_priority() if "--fifo" in sys.argv[1:] else False
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    offset = time.time_ns() - time.monotonic_ns()
    out = sys.stdout
    out.write(json.dumps({"path": os.ttyname(slave), "offset_ns": offset}) + "\n")
    out.flush()
    board = Board(master)
    stdin = sys.stdin.fileno()
    poller = select.poll()
    poller.register(master, select.POLLIN)
    poller.register(stdin, select.POLLIN | select.POLLHUP)
    pending = b""
    while True:
        for fd, _ in poller.poll():
            if fd == master:
                try:
                    data = os.read(master, 4096)
                except BlockingIOError:
                    continue
                board.input(data, time.monotonic_ns())
                continue
            chunk = os.read(stdin, 4096)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                cmd, pending = pending.split(b"\n", 1)
                if cmd.strip() == b"dump":
                    out.write(json.dumps({"rx": board.rx, "tx": board.tx, "fifo": fifo}) + "\n")
                    out.flush()


if __name__ == "__main__":
    main()
