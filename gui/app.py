"""Start the desktop form: ``gpu-tco form`` or ``python -m gpu_tco.gui``.

    gpu-tco form [--scenario FILE] [--screenshot FILE.png] [--size WIDTHxHEIGHT]

No traceback ever reaches a dialog: an exception hook writes the details to
``form.log`` in the user's configuration folder and shows one sentence.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from pathlib import Path

from ..core.catalog import user_config_dir

LOG_NAME = "form.log"
ANSWER_KEY = "gpu-tco answer"  # the PNG text entry holding what the pictured form answers


def log_path() -> Path:
    return user_config_dir() / LOG_NAME


def _logging() -> None:
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("gpu_tco.gui")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)


def install_exception_hook(show=None) -> None:
    """Uncaught exceptions: details to the log file, one sentence to the user (``show(sentence)``)."""
    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        logging.getLogger("gpu_tco.gui").error("unexpected error\n%s", "".join(traceback.format_exception(kind, value, tb)))
        sentence = f"Something went wrong ({kind.__name__}). The details are in {log_path()}."
        if show is not None:
            show(sentence)
        else:
            print(f"gpu-tco form: {sentence}", file=sys.stderr)
    sys.excepthook = hook


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="gpu-tco form", description="The desktop form: fill in a job, compare GPUs, rent or buy.")
    p.add_argument("--scenario", metavar="FILE", help="open a scenario (JSON or TOML with gpu-tco's input names)")
    p.add_argument("--screenshot", metavar="FILE.png", help="compute, save a picture of the window and exit")
    p.add_argument("--size", default=None, metavar="WxH", help="window size in pixels, e.g. 1280x800")
    return p.parse_args(argv)


def _size(text: str | None):
    if not text:
        return None
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"gpu-tco form: error: --size {text!r}: expected WIDTHxHEIGHT, e.g. 1280x800") from None
    if not (320 <= w <= 10_000 and 240 <= h <= 10_000):
        raise SystemExit(f"gpu-tco form: error: --size {text!r}: width 320-10,000 and height 240-10,000 pixels")
    return w, h


def main(argv=None) -> int:
    ns = parse_args(argv)
    size = _size(ns.size)
    headless = sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and not os.environ.get("QT_QPA_PLATFORM"):
        if not ns.screenshot:  # Qt would abort the process; say what to do instead
            print("gpu-tco form: error: no display found (DISPLAY is not set); run it in a desktop session, or use "
                  "--screenshot FILE.png, which works without one", file=sys.stderr)
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a picture needs no screen
    _logging()
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from .controller import Controller
    from .window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("gpu-tco")
    app.setOrganizationName("gpu-tco")
    settings = QSettings(str(user_config_dir() / "form.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Controller(), settings)
    install_exception_hook(lambda s: QMessageBox.warning(window, "gpu-tco", s))
    if size:
        window.resize(*size)
    if ns.scenario and not window.open_file(ns.scenario):
        if ns.screenshot:
            print(f"gpu-tco form: error: {window.last_dialog.text()}", file=sys.stderr)
            return 2
    window.show()
    if ns.screenshot:
        return _screenshot(app, window, Path(ns.screenshot))
    return app.exec()


def _screenshot(app, window, path: Path) -> int:
    """Wait for the first answer, let the window paint, save it, exit 0 (2 when nothing was computed)."""
    from PySide6.QtCore import QTimer
    done = {"answered": False}
    window.controller.answered.connect(lambda _a: done.update(answered=True))
    window.controller.problem.connect(lambda m: done.update(answered=done["answered"] or bool(m)))
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.start(30_000)
    while not done["answered"] and deadline.isActive():
        app.processEvents()
        window.controller.wait(20)
    for _ in range(5):  # let layouts and charts paint
        app.processEvents()
    if os.environ.get("QT_QPA_PLATFORM", "").startswith("xcb") or app.platformName() == "xcb":
        picture = window.screen().grabWindow(0)  # what the X server shows: real fonts and window
    else:
        picture = window.grab()
    image = picture.toImage()
    image.setText(ANSWER_KEY, window.answer_text())  # the answer in words, in the PNG (a tEXt chunk)
    tmp = path.with_name(path.name + ".tmp.png")
    if not image.save(str(tmp)):
        print(f"gpu-tco form: error: cannot write {path}", file=sys.stderr)
        return 2
    tmp.replace(path)  # never a half-written picture
    print(f"wrote {path.resolve()} ({picture.width()}x{picture.height()})")
    return 0 if done["answered"] else 2
