"""`partita serve --workers N`: forked workers on one listening socket, and their supervisor.

The supervisor is handed the function that serves in a child, so it knows
nothing of stores or apps (and serve.py, which calls it, stays the only
module that wires them).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any


def supervise(args: argparse.Namespace, serve_child: Callable[[], None]) -> int:
    """Run args.workers forked workers on the shared socket until told to stop.

    Forking after binding lets every worker accept on the same listening
    socket (the kernel spreads connections) and shares the imported code.
    Each worker opens its own SQLite connection after the fork (a connection
    must never cross a fork); WAL, BEGIN IMMEDIATE and busy_timeout make the
    shared file safe. SIGTERM/SIGINT are forwarded; a worker that dies on
    its own is replaced. `serve_child` runs in each child (after the fork:
    it opens the child's own store). Returns the exit code.
    """
    children: dict[int, float] = {}  # pid -> start time
    stopping = False
    failed = False
    stop_signals = {signal.SIGTERM, signal.SIGINT}

    def forward(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def hang_up(signum: int, frame: Any) -> None:
        for pid in list(children):  # each worker reloads its own --auth principals
            try:
                os.kill(pid, signal.SIGHUP)
            except ProcessLookupError:
                pass

    blocked = stop_signals | {signal.SIGHUP}

    def spawn() -> None:
        # Block the stop signals across fork so a child never runs the
        # parent's forwarding handler, and the parent never misses a pid.
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            pid = os.fork()
            if pid == 0:
                for signum in stop_signals:
                    signal.signal(signum, signal.SIG_DFL)
                # Until the worker's server installs its reload, a hang-up must not kill it.
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)
                code = 0
                try:
                    serve_child()
                except SystemExit as exit_:
                    code = exit_.code if isinstance(exit_.code, int) else 1
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
            children[pid] = time.monotonic()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)

    for signum in stop_signals:
        signal.signal(signum, forward)
    signal.signal(signal.SIGHUP, hang_up)
    for _ in range(args.workers):
        spawn()
    # The parent keeps the socket open (serve_child holds it; it accepts nothing) to start replacements.
    while children:
        pid, status = os.waitpid(-1, 0)
        started = children.pop(pid, None)
        if started is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        clean = code == 0 or (stopping and -code in stop_signals)
        if stopping:
            failed = failed or not clean
            continue
        print(f"partita: worker {pid} exited ({code}); starting another", file=sys.stderr, flush=True)
        if time.monotonic() - started < 1.0:
            time.sleep(1.0)  # do not spin on a worker that dies at start-up
        if not stopping:
            spawn()
    return 1 if failed else 0
