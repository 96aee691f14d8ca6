"""Writing files so that none is ever left half-written, and the one rule for gpu-tco's temporaries.

Every writer (workbook, e-mail draft, scenario, calibration tables) goes through
``write_atomically``: the data goes to a temporary file in the target's folder, is flushed to
disk, then renamed over the target (an atomic replace on POSIX and Windows), so the target is
always either the old or the new complete file.

Temporaries: on Linux the temporary is an unnamed file (``O_TMPFILE``) that gets a name only once
it is complete, so a process killed while writing leaves nothing behind.  Elsewhere (macOS,
Windows, file systems without ``O_TMPFILE``) it is a named file
``.<target name>.gpu-tco-tmp-<process id>-<random>``; a process killed between creating and
renaming it leaves it behind.  Every write first removes such files of gpu-tco's own in the
target's folder that have not changed for ``STALE_SECONDS`` (15 minutes: no write of a workbook,
a draft or a scenario takes more than seconds, so an older one belongs to no running write).
Older versions named their temporaries ``.gpu-tco-<random>.tmp``; stale ones of that pattern are
removed by the same rule.  Only regular files of these two patterns are ever removed.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from pathlib import Path

TEMP_MARK = ".gpu-tco-tmp-"   # the recognisable part of gpu-tco's temporaries: .<target>.gpu-tco-tmp-<pid>-<random>
TEMP_PATTERNS = (f".*{TEMP_MARK}*", ".gpu-tco-*.tmp")  # the current pattern and the one older versions left
STALE_SECONDS = 15 * 60


def folder_of(path: str | os.PathLike) -> Path:
    """The folder a file is written into ("." for a bare file name)."""
    parent = Path(path).parent
    return parent if str(parent) else Path(".")


def target_problem(path: str | os.PathLike, name_hint: str = "a file name") -> str | None:
    """What stops gpu-tco from writing ``path`` (missing folder, a folder, read-only, unusable name), in
    plain words, or None.  A read-only file is refused also when the user is root (who could write it):
    read-only is how people protect a file.  Used by every writer that checks its target."""
    target = Path(path)
    folder = folder_of(target)
    try:
        if not folder.is_dir():
            return f"the folder {folder} does not exist"
        if target.is_dir():
            return f"is a folder; give {name_hint}"
        if target.exists() and not (target.stat().st_mode & 0o222):
            return "is read-only; make it writable or choose another name"
    except OSError as err:  # a name too long for the file system, a folder that cannot be read
        return f"cannot be used ({err.strerror or err})"
    return None


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when two paths name one file: equal resolved paths (symbolic links followed), or, when
    both exist, the same file on disk (``os.path.samefile``: also hard links)."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a name too long: not provably the same
        return False


def remove_stale_temporaries(folder: str | os.PathLike, now: float | None = None) -> list[Path]:
    """Remove gpu-tco's own temporaries (TEMP_PATTERNS) in ``folder`` that have not changed for
    STALE_SECONDS; returns what was removed.  Never fails: another process's file, or one already
    gone, is left alone."""
    now = time.time() if now is None else now
    removed = []
    for pattern in TEMP_PATTERNS:
        try:
            found = list(Path(folder).glob(pattern))
        except OSError:
            continue
        for path in found:
            try:
                st = path.lstat()
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_SECONDS:
                    path.unlink()
                    removed.append(path)
            except OSError:
                pass
    return removed


def write_atomically(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path``; the old file stays whole until the new one is complete.  The new
    file has mode 0644 less the umask, as any file the user creates.  A read-only target is never
    replaced.  Raises OSError (nothing is left behind: the temporary is removed)."""
    target = Path(path)
    folder = folder_of(target)
    try:
        if not (os.stat(target).st_mode & 0o222):  # the rule of target_problem, also for a caller that skipped it
            raise PermissionError(errno.EACCES, "the file is read-only", str(target))
    except FileNotFoundError:
        pass
    remove_stale_temporaries(folder)
    name = folder / f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    if not _link_unnamed(data, folder, name):
        named = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        try:
            try:
                _write_all(named, data)
            finally:
                os.close(named)
        except BaseException:
            name.unlink(missing_ok=True)
            raise
    try:
        os.replace(name, target)
    except BaseException:
        name.unlink(missing_ok=True)
        raise
    return target


def _link_unnamed(data: bytes, folder: Path, name: Path) -> bool:
    """Linux: write an unnamed file in ``folder`` and give it ``name`` once complete; False where
    that is not possible (then the caller writes a named temporary)."""
    if not hasattr(os, "O_TMPFILE"):
        return False
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o644)
    except OSError:
        return False
    try:
        _write_all(fd, data)
        proc = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
        try:  # linkat(..., AT_SYMLINK_FOLLOW): Python uses it only when given a directory descriptor
            os.link(str(fd), name, src_dir_fd=proc, follow_symlinks=True)
        finally:
            os.close(proc)
    except OSError as err:
        if err.errno in _DISK_ERRNOS:
            raise  # a full disk or a file-size limit: a named temporary would fail the same way
        return False
    finally:
        os.close(fd)
    return True


_DISK_ERRNOS = {getattr(errno, n) for n in ("ENOSPC", "EFBIG", "EDQUOT") if hasattr(errno, n)}


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def read_regular_file(path: str | os.PathLike, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``max_bytes`` + 1 of them, so a caller can tell a file is
    too large).  A named pipe, a device or a folder is refused without reading from it (a pipe is
    opened non-blocking, so nothing waits for a writer).  Raises OSError whose ``strerror`` says in
    plain words what is wrong."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
            raise OSError(errno.EINVAL, f"it is {kind}, not a file")
        chunks, left = [], (max_bytes + 1) if max_bytes is not None else -1
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        return b"".join(chunks)
    finally:
        os.close(fd)
