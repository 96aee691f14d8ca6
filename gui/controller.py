"""The form's controller: state, validation messages and recompute scheduling (QtCore only, no widgets).

Every edit is checked at once (core's message goes to the field); the answer is recomputed
after a short pause in typing (``DEBOUNCE_MS``) on a worker thread, so the window never waits
on core.  An answer that arrives after a newer edit is dropped.  While any field is invalid,
the last valid answer stays on screen and is marked stale.
"""
from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from ..core import GpuTcoError, read_scenario, write_scenario
from ..workbooks.xlsx import WorkbookError
from . import model
from .model import FormState

DEBOUNCE_MS = 150  # after the last keystroke; a sentence typed at 5 keys per second recomputes once
log = logging.getLogger("gpu_tco.gui")


class _Relay(QObject):
    done = Signal(int, object)  # job id, (result, error)


class _Task(QRunnable):
    def __init__(self, job_id: int, fn: Callable, relay: _Relay):
        super().__init__()
        self.job_id, self.fn, self.relay = job_id, fn, relay

    def run(self):
        try:
            result, error = self.fn(), None
        except (GpuTcoError, WorkbookError) as err:  # the user's to fix: the message says what
            result, error = None, err
        except Exception as err:  # noqa: BLE001 - reported to the window as one sentence, details in the log
            log.exception("background work failed")
            result, error = None, err
        self.relay.done.emit(self.job_id, (result, error))


class _Progress(QObject):
    step = Signal(int, int, str)  # providers done, providers in all, the provider being read


class Controller(QObject):
    answered = Signal(object)        # the answer (gui.model.compute's dict)
    field_message = Signal(str, str)  # input name, core's message ("" = fine)
    stale = Signal(bool)             # True: the answer on screen is not for the current inputs
    problem = Signal(str, str)       # input name ("" = none named), a message about the inputs taken together ("" = none)
    busy = Signal(bool)              # background work running (recompute, export, e-mail)
    loaded = Signal()                # a scenario replaced the state: views re-read every field
    finished = Signal(str, object)   # a background action's name, (result, error)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.state = FormState()
        self.answer: dict | None = None
        self.path: Path | None = None    # the scenario file, once opened or saved
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(2)
        self._relay = _Relay(self)
        self._relay.done.connect(self._done)
        self._latest = 0                 # id of the newest recompute; older answers are dropped
        self._next_id = 0
        self._actions: dict[int, str] = {}
        self._running = 0
        self._cross: str | None = None   # a field marked by a check of the inputs taken together
        self.refused: dict = {}           # values an opened scenario gave that the form could not take, by input name
        self.refresh_progress = _Progress(self)  # File > Refresh prices: step(done, total, provider), from the worker
        self._refresh_cancelled = False

    # --- edits -------------------------------------------------------------------------
    def edit(self, name: str, text: str) -> str:
        """A field's new text; returns (and signals) core's message, "" when allowed."""
        self._clear_cross()
        message = self.state.set_text(name, text) or ""
        self._after_edit(name, message)
        return message

    def set_value(self, name: str, value) -> str:
        """A field's new value (a catalog name, a number, a custom architecture mapping)."""
        self._clear_cross()
        message = self.state.set_value(name, value) or ""
        self._after_edit(name, message)
        return message

    def set_scope(self, **changes) -> None:
        """The planner's scope: gpus (list or None), count (int or None), offer (name or None)."""
        for key, value in changes.items():
            if key not in ("gpus", "count", "offer"):
                raise TypeError(key)
            setattr(self.state, key, value)
        self._clear_cross()
        self.schedule()

    def _clear_cross(self) -> None:
        """Any change may resolve a problem of the inputs taken together: unmark that field (its own
        value was valid) and let the next recompute check again."""
        if self._cross is not None:
            name, self._cross = self._cross, None
            if self.state.errors.pop(name, None) is not None:
                self.field_message.emit(name, "")

    def _after_edit(self, name: str, message: str) -> None:
        self.field_message.emit(name, message)
        if self.state.blocking():
            self.stale.emit(self.answer is not None)
            self._timer.stop()
        else:
            self.schedule()

    def schedule(self) -> None:
        self._timer.start()

    # --- the answer ----------------------------------------------------------------------
    def recompute(self) -> None:
        """Compute the answer for the current state on a worker thread."""
        if self.state.blocking():
            self.stale.emit(self.answer is not None)
            return
        snapshot = copy.deepcopy(self.state)
        self._latest = self._start("answer", lambda: model.compute(snapshot))

    def _start(self, action: str, fn: Callable) -> int:
        self._next_id += 1
        job_id = self._next_id
        self._actions[job_id] = action
        self._running += 1
        self.busy.emit(True)
        self._pool.start(_Task(job_id, fn, self._relay))
        return job_id

    def _done(self, job_id: int, outcome: tuple) -> None:
        result, error = outcome
        action = self._actions.pop(job_id, "answer")
        self._running -= 1
        if self._running == 0:
            self.busy.emit(False)
        if action != "answer":
            self.finished.emit(action, (result, error))
            return
        if job_id != self._latest:
            return  # a newer edit is already being computed
        if error is not None:
            field = getattr(error, "field", None)
            if isinstance(error, GpuTcoError) and field in {i.name for i in model.FORM_INPUTS}:
                self.state.errors[field] = str(error)
                self._cross = field
                self.field_message.emit(field, str(error))
            self.problem.emit(field if isinstance(field, str) else "", short_message(error))
            self.stale.emit(self.answer is not None)
            return
        self.answer = result
        self.problem.emit("", "")
        self.stale.emit(False)
        self.answered.emit(result)

    def wait(self, ms: int = 30_000) -> bool:
        """Block until background work is done (for the screenshot and scripts)."""
        return self._pool.waitForDone(ms)

    # --- files -----------------------------------------------------------------------------
    def new(self) -> None:
        self.state = FormState()
        self.path = None
        self.loaded.emit()
        self.schedule()

    def open(self, path: str | Path) -> dict:
        """Load a scenario file; returns the errors of values the form could not take."""
        data = read_scenario(path)
        state = FormState()
        errors = state.load(data)  # raises GpuTcoError for a scope it cannot take: the old state stays
        self.state, self.path = state, Path(path)
        self.refused = {name: data[name] for name in errors if isinstance(data, dict) and name in data}
        self.loaded.emit()
        for name, message in errors.items():
            self.field_message.emit(name, message)
        if errors:
            self.stale.emit(self.answer is not None)
        else:
            self.schedule()
        return errors

    def save(self, path: str | Path) -> Path:
        written = write_scenario(path, self.state.scenario())
        self.path = Path(path)
        return written

    def export(self, path: str | Path, then: str = "export") -> None:
        """Write the workbook (the same writer and inputs as `gpu-tco workbook`) in the background;
        ``finished`` carries (path, None) or (None, error)."""
        from ..workbooks import write_workbook
        scenario, gpus = copy.deepcopy(self.state.workbook_inputs())
        self._start(then, lambda: write_workbook(path, scenario, gpus=gpus))

    def email(self, workbook: str | Path, send: Callable | None = None) -> None:
        """Save the workbook, then open an e-mail draft with it attached (``finished("email", (Sent, None))``)."""
        from ..workbooks import write_workbook
        from ..workbooks.email_draft import draft_text
        from ..workbooks.email_draft import send as send_draft
        scenario, gpus = copy.deepcopy(self.state.workbook_inputs())
        sender = send or send_draft

        def work():
            path = write_workbook(workbook, scenario, gpus=gpus)
            subject, body = draft_text(scenario, gpus)
            return sender(path, subject, body)
        self._start("email", work)

    # --- prices ----------------------------------------------------------------------------------
    def refresh_prices(self, user_dir: Path | None = None) -> None:
        """Fetch today's offers through gpuhunt in the background (core.price_refresh); progress comes through
        ``refresh_progress.step``, ``finished("refresh", (RefreshResult, None))`` at the end; the answer then
        recomputes with the new prices."""
        from ..core import refresh_offers as refresh
        self._refresh_cancelled = False
        step = self.refresh_progress.step
        self._start("refresh", lambda: refresh(progress=lambda done, total, name: step.emit(done, total, name),
                                                cancelled=lambda: self._refresh_cancelled, user_dir=user_dir))

    def cancel_refresh(self) -> None:
        """Stop the refresh before the next provider; the offers file stays as it was."""
        self._refresh_cancelled = True


def short_message(error: BaseException) -> str:
    """One sentence for the window: core's own message, or the kind of failure with a pointer to the log."""
    if isinstance(error, (GpuTcoError, WorkbookError)):
        return str(error)
    if isinstance(error, OSError):
        return f"The file could not be written or read ({error.strerror or error})."
    return f"Something went wrong ({type(error).__name__}); the details are in the log file."
