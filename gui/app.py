"""Start the desktop form: ``gpu-tco form`` or ``python -m gpu_tco.gui``.

    gpu-tco form [--scenario FILE] [--screenshot FILE.png] [--size WIDTHxHEIGHT]

No traceback ever reaches a dialog: an exception hook writes the details to
``form.log`` in the user's configuration folder and shows one sentence.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

from ..core import show_value as show
from ..core import user_config_dir

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
        if issubclass(kind, KeyboardInterrupt):  # Ctrl-C inside a Qt callback: one line, no traceback
            print(INTERRUPTED, file=sys.stderr)
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        logging.getLogger("gpu_tco.gui").error("unexpected error\n%s", "".join(traceback.format_exception(kind, value, tb)))
        sentence = f"Something went wrong ({kind.__name__}). The details are in {log_path()}."
        if show is not None:
            show(sentence)
        else:
            print(f"gpu-tco form: {sentence}", file=sys.stderr)
    sys.excepthook = hook


class _Parser(argparse.ArgumentParser):
    """A usage mistake in one line (exit code 2), like the gpu-tco command's."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parse_args(argv=None) -> argparse.Namespace:
    p = _Parser(prog="gpu-tco form", description="The desktop form: fill in a job, compare GPUs, rent or buy.",
                epilog="Exit codes with --screenshot: 0 the picture shows an answer; 2 a usage mistake, a scenario that "
                       "cannot be opened, or nothing computed (values to fix, or inputs that do not go together: "
                       "the picture shows them at their fields and one line on stderr names them).")
    p.add_argument("--scenario", metavar="FILE", help="open a scenario (JSON or TOML with gpu-tco's input names)")
    p.add_argument("--screenshot", metavar="FILE.png", help="compute, save a picture of the window and exit")
    p.add_argument("--size", default=None, metavar="WxH", help="window size in pixels, e.g. 1280x800")
    return p.parse_args(argv)


MIN_SIZE, MAX_SIZE = (320, 240), (10_000, 10_000)  # pixels: smaller shows nothing useful, larger no screen has
SIZE_ALLOWED = (f"allowed: WIDTHxHEIGHT in pixels, width {MIN_SIZE[0]} to {MAX_SIZE[0]:,} and height {MIN_SIZE[1]} to "
                f"{MAX_SIZE[1]:,}, e.g. 1280x800")


def size_of(text: str | None) -> tuple[int, int] | None:
    """``(width, height)`` from "1280x800" (None for no text), or ValueError with one line naming --size and
    what is allowed."""
    if not text:
        return None
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        w = h = None
    if w is None or not (MIN_SIZE[0] <= w <= MAX_SIZE[0] and MIN_SIZE[1] <= h <= MAX_SIZE[1]):
        raise ValueError(f"--size {show(text)}: {SIZE_ALLOWED}")
    return w, h


def main(argv=None) -> int:
    ns = parse_args(argv)
    try:
        size = size_of(ns.size)
    except ValueError as err:
        print(f"gpu-tco form: error: {err}", file=sys.stderr)
        return 2
    if ns.screenshot and Path(ns.screenshot).suffix.lower() != ".png":  # the picture is a PNG (its answer in a tEXt chunk)
        print(f"gpu-tco form: error: --screenshot {show(ns.screenshot)}: allowed: a file name ending in .png, e.g. form.png",
              file=sys.stderr)
        return 2
    headless = sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and not os.environ.get("QT_QPA_PLATFORM"):
        if not ns.screenshot:  # Qt would abort the process; say what to do instead
            print("gpu-tco form: error: no display found (DISPLAY is not set); run it in a desktop session, or use "
                  "--screenshot FILE.png, which works without one", file=sys.stderr)
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a picture needs no screen
    # from here on Ctrl-C only sets a flag (and stops Qt's loop): raised while PySide6 loads, a
    # KeyboardInterrupt aborts the interpreter; raised inside a Qt callback, it could be lost
    with _ctrl_c_closes() as interrupted:
        code = _start(ns, size, interrupted)
    if interrupted:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


def _start(ns, size, interrupted) -> int:
    _logging()
    from PySide6.QtCore import QTimer, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    # Qt's own notes (e.g. the offscreen platform's "does not support propagateSizeHints()") go to the log:
    # what the terminal shows is the form's one line
    qt_log = logging.getLogger("gpu_tco.gui.qt")
    qInstallMessageHandler(lambda mode, context, message: qt_log.info("%s", message))

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("gpu-tco")
    app.setOrganizationName("gpu-tco")
    if interrupted:
        return EXIT_INTERRUPTED
    ticker = QTimer()  # Python sees a signal only when it runs: this lets it run while Qt waits for events
    ticker.timeout.connect(lambda: None)
    ticker.start(200)
    try:
        return _run(app, ns, size, interrupted)
    finally:
        ticker.stop()


def _run(app, ns, size, interrupted) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from .controller import Controller
    from .window import MainWindow

    settings = QSettings(str(user_config_dir() / "form.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Controller(), settings)
    install_exception_hook(lambda s: QMessageBox.warning(window, "gpu-tco", s))
    if size:
        window.resize(*size)
    if ns.scenario and not window.open_file(ns.scenario):
        if ns.screenshot:
            print(f"gpu-tco form: error: {window.last_dialog.text()}", file=sys.stderr)
            return 2
    if interrupted:
        return EXIT_INTERRUPTED
    window.show()
    return _screenshot(app, window, Path(ns.screenshot), interrupted) if ns.screenshot else app.exec()


INTERRUPTED, EXIT_INTERRUPTED = "gpu-tco: interrupted", 130  # as the gpu-tco command says and exits


@contextlib.contextmanager
def _ctrl_c_closes():
    """While the form runs, Ctrl-C closes it: the list this yields gets an entry and Qt's loop stops."""
    interrupted: list[bool] = []

    def on_ctrl_c(signum, frame):
        interrupted.append(True)
        widgets = sys.modules.get("PySide6.QtWidgets")
        app = widgets.QApplication.instance() if widgets is not None else None
        if app is not None:
            app.quit()

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield interrupted
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _screenshot(app, window, path: Path, interrupted=()) -> int:
    """Wait for the first answer, let the window paint, save it, exit 0; exit 2 with one line on stderr when
    nothing was computed: values of the scenario to fix (shown at their fields, no waiting: nothing is
    computed for them), or inputs that do not go together."""
    from PySide6.QtCore import QTimer
    controller = window.controller
    done = {"answered": False, "problem": ""}
    controller.answered.connect(lambda _a: done.update(answered=True))
    controller.problem.connect(lambda _field, m: done.update(problem=m))
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.start(SCREENSHOT_WAIT_MS)
    while not (done["answered"] or done["problem"] or controller.state.errors or interrupted) and deadline.isActive():
        app.processEvents()
        controller.wait(20)
    if interrupted:
        return EXIT_INTERRUPTED
    for _ in range(5):  # let layouts and charts paint
        app.processEvents()
    if os.environ.get("QT_QPA_PLATFORM", "").startswith("xcb") or app.platformName() == "xcb":
        picture = window.screen().grabWindow(0)  # what the X server shows: real fonts and window
    else:
        picture = window.grab()
    image = picture.toImage()
    image.setText(ANSWER_KEY, window.answer_text())  # the answer in words, in the PNG (a tEXt chunk)
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from gpu_tco.core import target_problem, write_atomically
    encoded = QByteArray()
    buffer = QBuffer(encoded)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    problem = target_problem(path, "a file name ending in .png")
    if problem or not image.save(buffer, "PNG"):
        print(f"gpu-tco form: error: cannot write {path}" + (f": {problem}" if problem else ""), file=sys.stderr)
        return 2
    buffer.close()
    try:
        write_atomically(path, bytes(encoded.data()))  # the one atomic writer: never a half-written picture
    except OSError as err:
        print(f"gpu-tco form: error: cannot write {path} ({err.strerror or err})", file=sys.stderr)
        return 2
    print(f"wrote {path.resolve()} ({picture.width()}x{picture.height()})")
    if done["answered"]:
        return 0
    errors = controller.state.errors
    if errors:
        why = f"{len(errors)} value{'s' if len(errors) > 1 else ''} to fix, marked in the picture: " + "; ".join(errors.values())
    elif done["problem"]:
        why = f"no answer: {done['problem']}"
    else:
        why = f"no answer within {SCREENSHOT_WAIT_MS // 1000} s"
    print(f"gpu-tco form: error: {why}", file=sys.stderr)
    return 2


SCREENSHOT_WAIT_MS = 30_000  # the longest a first answer may take on a slow machine
