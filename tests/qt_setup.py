"""What Qt needs on a bare Debian 12, installed by the test set-up like LibreOffice (tests/lo.py).

Offscreen rendering (every Qt test) needs the shared libraries in OFFSCREEN; the screenshot of a
real X11 window under Xvfb needs XCB too.  Package names were found on a bare Debian 12 image
by loading Qt's platform plugins and reading what failed (ldd on libQt6XcbQpa.so.6).
"""
from __future__ import annotations

import ctypes
import shutil

from lo import apt_install

OFFSCREEN = {"libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libxkbcommon.so.0": "libxkbcommon0",
             "libfontconfig.so.1": "libfontconfig1", "libdbus-1.so.3": "libdbus-1-3", "libglib-2.0.so.0": "libglib2.0-0"}
XCB = {"libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4", "libxcb-image.so.0": "libxcb-image0",
       "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-render-util.so.0": "libxcb-render-util0",
       "libxcb-shape.so.0": "libxcb-shape0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0"}
XCB_PROGRAMS = {"xvfb-run": "xvfb", "xauth": "xauth"}
# The form's pause before it recomputes, in the tests (tests/conftest.py): shorter than the form's own 150 ms, which each form
# test would otherwise wait out after its edits with its worker idle
TEST_RECOMPUTE_PAUSE_MS = 30
FONT_PACKAGE = "fonts-dejavu-core"  # without a font every glyph is a box, and Qt says nothing


def _missing(libraries: dict) -> list[str]:
    out = []
    for soname, package in libraries.items():
        try:
            ctypes.CDLL(soname)
        except OSError:
            out.append(package)
    return out


def _fonts_missing() -> bool:
    from pathlib import Path
    return not any(Path(d).is_dir() and any(Path(d).rglob("*.ttf")) for d in ("/usr/share/fonts", "/usr/local/share/fonts"))


def ensure_offscreen() -> list[str]:
    """Install what offscreen Qt lacks (root with apt only); returns what is still missing."""
    missing = _missing(OFFSCREEN) + ([FONT_PACKAGE] if _fonts_missing() else [])
    if missing and apt_install(missing, "Qt draws the desktop form offscreen"):
        missing = _missing(OFFSCREEN) + ([FONT_PACKAGE] if _fonts_missing() else [])
    return missing


def ensure_xcb() -> list[str]:
    """Install Xvfb and the XCB libraries for a real X11 window; returns what is still missing."""
    def missing():
        return _missing(XCB) + [pkg for exe, pkg in XCB_PROGRAMS.items() if not shutil.which(exe)]
    gone = missing()
    if gone and apt_install(gone, "the form's screenshot under Xvfb, a real X11 window"):
        gone = missing()
    return gone
