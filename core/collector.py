"""The cyclic garbage collector paused while gpu-tco builds large structures that stay alive: a workbook's some 20,000
cells until the file is written, a catalog's rows as they are read.  Every pass of the collector over them finds
nothing to free (the default workbook's build and save: 0.35 s of CPU with the passes, 0.31 s without).

One pause is shared by every thread: the collector goes off with the first pause and on again with the last one to
end, if it was on before the first (the form builds a workbook on a worker thread while another reads a catalog; two
threads each switching it off and on again as they saw it could leave it off for good)."""
from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator


class _Pause:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0  # pauses now running, in every thread
        self.restore = False  # whether the collector was on when the first of them began

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self.lock:
            if self.depth == 0:
                self.restore = gc.isenabled()
                gc.disable()
            self.depth += 1
        try:
            yield
        finally:
            with self.lock:
                self.depth -= 1
                if self.depth == 0 and self.restore:
                    gc.enable()


collector_paused = _Pause().paused
