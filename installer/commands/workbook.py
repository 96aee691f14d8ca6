"""``gpu-tco workbook``: the formula-linked Excel workbook (and its e-mail draft)."""
from __future__ import annotations

from ..core import InputError
from .common import _collect_inputs


def cmd_workbook(ns) -> int:
    from ..workbooks import write_workbook

    inputs = _collect_inputs(ns)
    if ns.email_draft:  # a draft target that cannot be used is refused before anything is written
        from ..workbooks.email_draft import check_draft_target
        check_draft_target(ns.email_draft, ns.out)
    path = write_workbook(ns.out, inputs, gpus=getattr(ns, "scenario_gpus", None))
    print(f"wrote {path.resolve()}")
    if ns.email_draft:
        from ..workbooks.email_draft import draft_text, write_draft
        subject, body = draft_text(inputs, getattr(ns, "scenario_gpus", None))
        try:
            draft = write_draft(ns.email_draft, path, subject, body)
        except OSError as err:
            raise InputError("email-draft", ns.email_draft, f"cannot be written ({err.strerror or err})") from None
        print(f"wrote {draft.resolve()} (an e-mail draft with the workbook attached: open it in your mail program)")
    return 0


def _workbook_error():
    try:
        from gpu_tco.workbooks import WorkbookError
        return WorkbookError
    except ImportError:  # openpyxl missing: the workbook commands report it themselves
        return InputError
