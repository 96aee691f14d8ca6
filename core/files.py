"""Writing a file so that it is never left half-written: a temporary file in the target's folder,
flushed to disk, then renamed over the target (an atomic replace on POSIX and Windows)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path``; the old file stays whole until the new one is complete.
    Raises OSError (the temporary file is removed)."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".gpu-tco-", suffix=".tmp", dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
