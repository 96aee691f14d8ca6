"""The generated code of the formulas kept on disk, so a new process does not generate it again.

Generating the code for every quantity walks all the expression trees (about 25-70 ms on the project's
2-core machine); every command-line run and every Excel session would pay it on its first evaluation.
Instead each generated function (its source and compiled code object, with what the engine needs to call
it) is written once to the user's cache folder and read back by later processes (about 1 ms).

Where: ``GPU_TCO_CACHE_DIR`` when set; otherwise ``$XDG_CACHE_HOME/gpu-tco`` (``~/.cache/gpu-tco``) on
Linux, ``~/Library/Caches/gpu-tco`` on macOS, ``%LOCALAPPDATA%\\gpu-tco\\cache`` on Windows.  Entries live in
one folder per ``fingerprint()``: a hash of the engine's own code (every core/*.py, the formulas and the
generator included), its catalogs (core/data/*.csv) and the Python version (code objects are
version-specific).  Any change to them gives a new folder, and the old ones are removed when the first
entry of the new one is written; an entry also records its own fingerprint and key, which are checked.

gpu-tco creates its own folder only inside a cache root that already exists (``~/.cache`` on Linux exists on
nearly every desktop; ``~/Library/Caches`` and ``%LOCALAPPDATA%`` always do): a home without one keeps no cache, so
running gpu-tco there leaves the home as it was (the installers' tests check that byte for byte after an uninstall).

Nothing here ever fails an evaluation: an entry that cannot be read, is truncated, corrupt, from another
version or for another key is ignored (the code is generated again and the entry rewritten), and a
folder that cannot be created or written is simply not used.  Entries are written atomically
(``files.write_atomically``), so a process killed while writing leaves the old entry or none.
"""
from __future__ import annotations

import functools
import hashlib
import marshal
import os
import shutil
import sys
from pathlib import Path

from .files import write_atomically

MAGIC = b"gpu-tco code\n"
FORMAT = 1               # the layout of an entry; changing it changes every fingerprint
MAX_ENTRIES = 2000       # a folder holding more takes no new entries (random sets of outputs could fill a disk)
CACHE_ENV = "GPU_TCO_CACHE_DIR"
_PREFIX = "code-"


def cache_dir() -> Path:
    """The user's cache folder for gpu-tco (``GPU_TCO_CACHE_DIR`` wins; otherwise the platform convention)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "gpu-tco" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "gpu-tco"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-tco"


@functools.cache
def fingerprint() -> str | None:
    """A hash of what the generated code depends on: the engine's code and catalogs as installed, the Python
    version and the entry format.  Computed once per process (about 1 ms: some 700 KB of files).  None where the
    engine's source files cannot be read (a frozen application holds compiled modules only): no hash could tell
    its versions apart, so there the cache is not used."""
    here = Path(__file__).resolve().parent
    sources = sorted(here.glob("*.py"))
    if not any(path.name == "formulas.py" for path in sources):
        return None
    digest = hashlib.sha256(f"{FORMAT} {sys.version} {sys.implementation.cache_tag} {marshal.version}".encode())
    for path in sources + sorted((here / "data").glob("*.csv")):
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"unreadable")
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def _folder() -> Path:
    return cache_dir() / f"{_PREFIX}{fingerprint()}"


def _entry_path(key) -> Path:
    return _folder() / (hashlib.sha256(repr(key).encode()).hexdigest()[:32] + ".bin")


def load(key) -> dict | None:
    """The stored entry for ``key`` (a tuple of plain values), or None when there is none usable."""
    if fingerprint() is None:
        return None
    try:
        data = _entry_path(key).read_bytes()
        head, checksum, payload = data[:len(MAGIC)], data[len(MAGIC):len(MAGIC) + 32], data[len(MAGIC) + 32:]
        if head != MAGIC or hashlib.sha256(payload).digest() != checksum:
            return None  # torn or altered bytes are never unmarshalled (a damaged code object could crash)
        entry = marshal.loads(payload)
    except Exception:  # noqa: BLE001 - missing, unreadable, truncated or corrupt: generate again
        return None
    if type(entry) is not dict or entry.get("fingerprint") != fingerprint() or entry.get("key") != repr(key):
        return None
    return entry.get("value") if type(entry.get("value")) is dict else None


def save(key, value: dict) -> bool:
    """Store ``value`` (plain values and code objects) for ``key``; False when it could not be stored (a folder
    that cannot be written, a full disk): the caller has its value either way."""
    if fingerprint() is None:
        return False
    try:
        payload = marshal.dumps({"fingerprint": fingerprint(), "key": repr(key), "value": value})
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        folder = _folder()
        fresh = not folder.is_dir()
        if fresh:  # gpu-tco's own folder only, inside a cache root that exists (never ~/.cache itself: see above)
            folder.parent.mkdir(exist_ok=True)
            folder.mkdir(exist_ok=True)
        if fresh:
            _remove_old_folders(folder)
        elif len(os.listdir(folder)) >= MAX_ENTRIES:
            return False
        write_atomically(_entry_path(key), data)
        return True
    except Exception:  # noqa: BLE001 - a cache that cannot be written is not used; the evaluation goes on
        return False


def remembered(key: tuple, compute) -> list:
    """``compute()`` (a list of plain values that depends on the formulas alone, such as the names a walk over the
    expression trees finds), read from the cache when an earlier process stored it for ``key``.  The walks behind
    the command line's options and the fit rules cost about 30 ms of every start; reading the answer back about
    0.1 ms.  A value that cannot be stored or read is computed, as without a cache."""
    stored = load(("remembered", *key))
    if stored is not None and type(stored.get("list")) is list:
        return stored["list"]
    value = list(compute())
    save(("remembered", *key), {"list": value})
    return value


def kept(name: str, of, compute) -> dict:
    """``compute()``, a dict computed by the engine from ``of`` (measurements, points: whatever the caller gives it,
    whose ``repr`` says all of it) and from the catalogs as loaded, read from the cache when an earlier process stored
    it for the same ``of``, the same catalogs (the user's own files and refreshed offers included:
    ``catalog.content_digest``) and the same NumPy; the engine's code and shipped files are the fingerprint's.  For the
    calibration's refits (leave one source out: some seconds each), which ``gpu-tco calibrate`` and ``gpu-tco docs``
    would otherwise repeat for every run of the same version.  NumPy numbers are stored as Python's."""
    from . import catalog
    numpy = sys.modules.get("numpy")
    depends = (of, catalog.content_digest(), getattr(numpy, "__version__", None))
    key = (name, hashlib.sha256(repr(depends).encode()).hexdigest())
    stored = load(key)
    if stored is not None:
        return stored
    value = _plain(compute())
    save(key, value)
    return value


def _plain(value):
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "item") and type(value).__module__ == "numpy":  # a NumPy scalar (no NumPy import here)
        return value.item()
    return value


def _remove_old_folders(current: Path) -> None:
    """Entries of other fingerprints (an older version of gpu-tco) are never read again."""
    try:
        for path in current.parent.glob(f"{_PREFIX}*"):
            if path != current and path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def clear() -> None:
    """Remove every stored entry (``gpu-tco bench`` times a first evaluation without them)."""
    try:
        for path in cache_dir().glob(f"{_PREFIX}*"):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass
