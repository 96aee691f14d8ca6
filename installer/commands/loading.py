"""What the command does while its engine loads (no engine import): the collector off, what the imports built frozen."""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_off_while_loading(wanted: bool) -> Iterator[None]:
    """The cyclic garbage collector off while the command's own imports run, where ``wanted`` and the collector is on:
    NumPy, the engine's formula trees and the catalogs are kept for the whole command, so the collector's passes over
    them free nothing (about 11 ms of the 0.16 to 0.17 s of CPU of `gpu-tco --help`).  Once the imports are done, what
    they built is frozen (out of the collector's reach) before it goes on again; should an import fail, it goes on at
    once.  A process that is not the command, or that turned the collector off itself, keeps it as it was.  (Not
    core.collector's pause: importing it would load the engine first, and that pause ends without freezing.)"""
    off = wanted and gc.isenabled()
    if off:
        gc.disable()
    try:
        yield
    except BaseException:
        if off:
            gc.enable()
        raise
    if off:
        gc.freeze()
        gc.enable()
