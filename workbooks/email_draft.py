"""An e-mail draft with the workbook attached, for the desktop form and the command line.

A mailto: link cannot carry an attachment (RFC 6068 defines no such field), so the draft is
opened through the mail program itself: classic Outlook on Windows through COM
(``Outlook.Application``, ``CreateItem(0)``, ``Attachments.Add``, ``Display``: Microsoft's
Outlook object model documentation), Apple Mail on macOS through osascript (a visible outgoing
message with the attachment), ``xdg-email --attach`` on Linux (freedesktop.org xdg-utils).
Whenever none of these is there or one fails, an RFC 5322 draft (.eml) is written: the header
``X-Unsent: 1`` and no From, Date or Message-ID make classic Outlook and Thunderbird open it as an
editable draft; it is opened with the default program for .eml files, or left in its folder.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from email.header import Header
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path
from typing import Callable, Mapping

from ..core import InputError, same_file, target_problem, write_atomically

XLSX_TYPE = ("application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet")

# AppleScript run with the subject, body and attachment path as arguments (no quoting problems)
MAIL_SCRIPT = """on run argv
    set theSubject to item 1 of argv
    set theBody to item 2 of argv
    set theFile to POSIX file (item 3 of argv) as alias
    tell application "Mail"
        set msg to make new outgoing message with properties {subject:theSubject, content:theBody & return & return, visible:true}
        tell msg to make new attachment with properties {file name:theFile} at after the last paragraph
        delay 1
        activate
    end tell
end run"""


def draft_text(scenario: Mapping | None = None, gpus: list[str] | None = None) -> tuple[str, str]:
    """(subject, body) for a job: "GPU plan: <model> <method>" and a short plain-text summary
    with the planner's recommendation (gpu_tco.core.planner.plan)."""
    from ..core import DEFAULTS, check_input, likely_hours_text, packed_documents_text, plan, ranks_purchases
    from ..core import compose_recommendation as compose
    from ..core import plan_scope as scope

    scenario = dict(scenario or {})
    if "task" in scenario and check_input("task", scenario["task"]) == "serve":
        return _serve_draft(scenario, gpus)
    job, where = scope(scenario, gpus)
    if not gpus:  # as the workbook it goes with: a price is the price of the scenario's GPU (its default when not given)
        where.setdefault("price_gpu", DEFAULTS["gpu"])
    result = plan(job, **where)
    a = result["inputs"]  # the job as the planner checked it (a tensor-parallel degree need not divide 8)
    rec = result["recommended"]
    subject = f"GPU plan: {a['model']} {a['method']}"
    lines = [f"Job: {a['method']} fine-tuning of {a['model']} on {a['tokens'] * a['epochs']:,.0f} tokens "
             f"(sequence length {a['seq_len']:,.0f}{packed_documents_text(a)}, {a['micro_batch']:g} sequence{'' if a['micro_batch'] == 1 else 's'} "
             "per GPU per step).", ""]
    if rec is None:
        lines.append(f"{compose(result).text} The workbook shows why each option fails.")
    else:  # the recommendation in core's words, as the workbook's Start sheet and the command line say it
        lines.append(f"Recommended: {compose(result).text}")
        lines.append(f"Memory: {rec['peak_gib_per_gpu']:.1f} GiB per GPU. Hours: {likely_hours_text(rec, a['framework'])}.")
    ok = sum(1 for o in result["options"] if o["ok"])
    weighed = (", ".join(where["gpus"]) if where.get("gpus") else "every GPU type",
               f"{where['count']} GPUs" if "count" in where else "every count",
               where["offer"] if where.get("offer") else "every cloud offer")
    lines += ["", f"{ok} of {len(result['options'])} options were acceptable ({', '.join(weighed)}, "
                  f"{'and buying' if ranks_purchases(a) else 'renting only: a one-off job'}).",
              "The attached workbook recomputes every number in Excel or LibreOffice: change the inputs on its "
              "Inputs sheet and the answers follow.", "", "Made with gpu-tco."]
    return subject, "\n".join(lines)


def _serve_draft(scenario: dict, gpus: list[str] | None) -> tuple[str, str]:
    """(subject, body) for a serving scenario: the demand and targets, and the serving planner's answer in core's
    words (rent, buy or use the API), as the workbook's Start sheet and the command line say it."""
    from ..core import serve_plan
    result = serve_plan(scenario, gpus=gpus)
    a, demand = result["inputs"], result["demand"]
    subject = f"Serving plan: {a['model']}"
    targets = ", ".join(t for t in (f"first token within {a['ttft_slo_ms']:g} ms" if a["ttft_slo_ms"] else "",
                                    f"{a['tpot_slo_ms']:g} ms per generated token" if a["tpot_slo_ms"] else "") if t)
    lines = [f"Job: serve {a['model']} at {demand['requests_per_s']:g} requests a second ({a['prompt_tokens']:g} prompt and "
             f"{a['output_tokens']:g} generated tokens each, {a['hours_per_day']:g} hours a day), "
             f"{targets or 'no latency targets'}.", "", f"Answer: {result['recommendation']}"]
    ok = sum(1 for o in result["options"] if o.ok)
    lines += ["", f"{ok} of {len(result['options'])} setups were acceptable: they fit, meet the targets and have a price "
              "(every GPU, GPUs per replica, weight format, cloud offer and buying).",
              "The attached workbook recomputes every number in Excel or LibreOffice: change the demand, the targets or the "
              "prices on its Inputs sheet and the answer follows.", "", "Made with gpu-tco."]
    return subject, "\n".join(lines)


def ascii_file_name(name: str, fallback: str = "gpu-plan.xlsx") -> str:
    """A file name any mail program shows correctly: accents dropped, other characters replaced by "_"."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    plain = re.sub(r"[^A-Za-z0-9._ -]+", "_", plain).strip(" ._")
    stem, dot, ext = plain.rpartition(".")
    return plain if dot and stem.strip("_") else fallback


# characters that end or break a header line, or that a header cannot carry: control characters
# (C0, DEL, C1 such as U+0085 NEXT LINE) and the Unicode line and paragraph separators
_LINE_BREAKERS = re.compile(" *[\x00-\x1f\x7f-\x9f\u2028\u2029][ \x00-\x1f\x7f-\x9f\u2028\u2029]*")
_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: no UTF-8 form; shown as U+FFFD


def header_line(text: str) -> str:
    """``text`` as one header line: each run of control or line-separator characters (CR, LF, TAB,
    U+0085, U+2028, U+2029, ...) with the spaces around it becomes one space, a lone surrogate
    becomes U+FFFD (the visible replacement character), spaces at the ends are dropped."""
    return _SURROGATE.sub("\ufffd", _LINE_BREAKERS.sub(" ", str(text))).strip()


def _carriable(body: str) -> str:
    """The body as every channel carries it (a file, a command line, COM): a NUL or a lone surrogate
    becomes U+FFFD; the wording is left as it is."""
    return _SURROGATE.sub("\ufffd", body.replace("\x00", "\ufffd"))


def build_draft(workbook: str | os.PathLike, subject: str, body: str) -> bytes:
    """An RFC 5322 draft with the workbook attached: ``X-Unsent: 1``, no From/Date/Message-ID, CRLF line ends.

    The subject is reduced to one line (``header_line``) and folded and encoded by the email package.
    A subject that is not plain ASCII, or holds text that looks like an RFC 2047 encoded-word
    (``=?utf-8?b?...?=``), is sent whole as encoded-words (``email.header.Header``): a mail program
    decodes them back to exactly the text given (spaces included; an encoded-word in the name stays
    literal text), never to other headers or other words.
    """
    path = Path(workbook)
    subject = header_line(subject)
    msg = EmailMessage(policy=SMTP)
    if "=?" in subject or not subject.isascii():
        folded = Header(subject, "utf-8", header_name="Subject").encode(linesep="\r\n")
        msg.set_raw("Subject", folded)
    else:
        msg["Subject"] = subject
    msg["X-Unsent"] = "1"
    msg.set_content(_carriable(body))
    msg.add_attachment(path.read_bytes(), maintype=XLSX_TYPE[0], subtype=XLSX_TYPE[1], filename=ascii_file_name(path.name))
    return msg.as_bytes()


def check_draft_target(eml: str | os.PathLike, workbook: str | os.PathLike) -> Path:
    """The draft's path, or InputError (field ``email-draft``) when it is the workbook itself (also
    through a symbolic or hard link) or cannot be written (the rule every writer follows:
    ``gpu_tco.core.files.target_problem``: a read-only file is refused, never replaced)."""
    target = Path(eml)
    if same_file(target, workbook):
        raise InputError("email-draft", str(eml), f"is the workbook itself ({Path(workbook).name}); "
                                                  "give the draft another name, e.g. one ending in .eml")
    problem = target_problem(target, "a file name ending in .eml")
    if problem:
        raise InputError("email-draft", str(eml), problem)
    return target


def write_draft(eml: str | os.PathLike, workbook: str | os.PathLike, subject: str, body: str) -> Path:
    """Write the draft atomically (``gpu_tco.core.files.write_atomically``) after ``check_draft_target``.
    Raises InputError for a target that may not be written, OSError when writing fails."""
    target = check_draft_target(eml, workbook)
    return write_atomically(target, build_draft(workbook, subject, body))


@dataclass
class Sent:
    """How the draft reached the user: method is outlook, mail, xdg-email, eml-opened or eml-saved."""
    method: str
    path: Path | None  # the .eml file, when one was written
    message: str       # one sentence for the user


def _outlook(workbook: Path, subject: str, body: str) -> None:
    import win32com.client  # pywin32; present with classic Outlook installs that use xlwings
    mail = win32com.client.Dispatch("Outlook.Application").CreateItem(0)  # 0 = olMailItem
    mail.Subject = subject
    mail.Body = body
    mail.Attachments.Add(str(workbook))
    mail.Display()


def _open_with_default(path: Path, platform: str, run: Callable, which: Callable) -> bool:
    if platform.startswith("win"):
        try:
            os.startfile(str(path))  # type: ignore[attr-defined]  # Windows only
            return True
        except OSError:
            return False
    command = ["open", str(path)] if platform == "darwin" else ([which("xdg-open"), str(path)] if which("xdg-open") else None)
    if command is None:
        return False
    try:
        return run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def send(workbook: str | os.PathLike, subject: str, body: str, eml: str | os.PathLike | None = None,
         platform: str = sys.platform, run: Callable = subprocess.run, which: Callable = shutil.which,
         outlook: Callable = _outlook, open_file: Callable | None = None) -> Sent:
    """Open an e-mail draft with ``workbook`` attached in the user's mail program.

    Tries the platform's way (Windows: Outlook; macOS: Mail; other: xdg-email), then an .eml
    draft (``eml``, default beside the workbook) opened with the default program; when nothing
    opens it, the draft stays where it was written and ``message`` says where.  ``run``,
    ``which``, ``outlook`` and ``open_file`` are the outside world (replaceable in tests).
    """
    workbook = Path(workbook).resolve()
    # what a command line, COM or AppleScript can carry: one subject line, no NUL or lone surrogate
    subject, body = header_line(subject), _carriable(body)
    if platform.startswith("win"):
        try:
            outlook(workbook, subject, body)
            return Sent("outlook", None, "A draft with the workbook attached is open in Outlook.")
        except Exception:  # noqa: BLE001 - no pywin32, no classic Outlook, or COM refused: fall back to .eml
            pass
    elif platform == "darwin":
        try:
            if run(["osascript", "-e", MAIL_SCRIPT, subject, body, str(workbook)], capture_output=True, timeout=60).returncode == 0:
                return Sent("mail", None, "A message with the workbook attached is open in Mail.")
        except (OSError, subprocess.SubprocessError):
            pass
    elif which("xdg-email"):
        try:
            if run([which("xdg-email"), "--subject", subject, "--body", body, "--attach", str(workbook)],
                   capture_output=True, timeout=60).returncode == 0:
                return Sent("xdg-email", None, "A draft with the workbook attached is open in your mail program.")
        except (OSError, subprocess.SubprocessError):
            pass
    draft = write_draft(Path(eml) if eml else workbook.with_suffix(".eml"), workbook, subject, body)
    opener = open_file or (lambda p: _open_with_default(p, platform, run, which))
    if opener(draft):
        return Sent("eml-opened", draft, f"The draft {draft.name} is open in your mail program.")
    return Sent("eml-saved", draft, f"No mail program opened the draft; it is saved as {draft} (attach or open it yourself).")
