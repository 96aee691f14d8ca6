"""Files a hostile or unlucky user hands gpu-tco, and the files it writes: e-mail drafts, catalogs with
text no workbook can hold, numbers at the ends of their ranges, pipes and devices, scenario round trips."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
import time
import zipfile
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path

import numpy as np
import pytest
from helpers import cli_batch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lo import book
from openpyxl import Workbook, load_workbook

from gpu_tco import core
from gpu_tco.core import catalog, files
from gpu_tco.core.inputs import INPUTS
from gpu_tco.core.scenario_files import read_scenario, scenario_text, write_scenario
from gpu_tco.core.validation import check_number
from gpu_tco.workbooks import write_workbook
from gpu_tco.workbooks.email_draft import build_draft, header_line, write_draft


def _cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpu_tco", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, **(env or {})})


def _one_line_exit_2(out, message, what):
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, (what, out.returncode, out.stderr[-400:])
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr, (what, out.stderr[-400:])
    assert "internal error" not in out.stderr and len(out.stderr) < 600


# --- e-mail drafts --------------------------------------------------------------------------------

TINY_XLSX = b"PK\x05\x06" + b"\x00" * 18  # an empty zip: the draft only attaches the bytes


def _parse(raw: bytes):
    return BytesParser(policy=default_policy).parsebytes(raw)


@pytest.fixture(scope="module")
def tiny_book(tmp_path_factory):
    path = tmp_path_factory.mktemp("draft") / "plan.xlsx"
    path.write_bytes(TINY_XLSX)
    return path


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(name=st.text(max_size=120))
@example(name="=?utf-8?b?QmNjOiBldmls?=")
@example(name="a\r\nBcc: evil@example.com\r\nTo: x")
@example(name="x\u2028Bcc: y\u2029z\u0085w\x0bv\x0cu\x1cq")
@example(name="caf\u00e9 =?iso-8859-1?q?=E9?= \ud800 \udfff " + "long " * 60)
def test_a_draft_subject_is_one_line_and_reads_back_as_the_literal_name(tiny_book, name):
    subject = f"GPU plan: {name} lora"
    raw = build_draft(tiny_book, subject, "body")
    msg = _parse(raw)
    assert list(msg.keys()) == ["Subject", "X-Unsent", "MIME-Version", "Content-Type"]  # never Bcc, To, Cc
    assert msg["Subject"] == header_line(subject)
    assert "\n" not in msg["Subject"] and "\r" not in msg["Subject"]
    head = raw.split(b"\r\n\r\n", 1)[0]
    assert all(len(line) <= 998 for line in head.split(b"\r\n"))
    assert b"\n" not in head.replace(b"\r\n", b"") and b"\r" not in head.replace(b"\r\n", b"")
    (part,) = [p for p in msg.iter_attachments()]
    assert part.get_content() == TINY_XLSX


def test_a_draft_never_replaces_the_workbook_or_a_read_only_file(tmp_path):
    book = tmp_path / "plan.xlsx"
    book.write_bytes(TINY_XLSX)
    (tmp_path / "link.eml").symlink_to(book)
    os.link(book, tmp_path / "hard.eml")
    for target in (book, tmp_path / "." / "plan.xlsx", tmp_path / "link.eml", tmp_path / "hard.eml"):
        with pytest.raises(core.InputError, match="is the workbook itself"):
            write_draft(target, book, "s", "b")
    assert book.read_bytes() == TINY_XLSX
    locked = tmp_path / "old.eml"
    locked.write_bytes(b"mine")
    locked.chmod(0o444)
    with pytest.raises(core.InputError, match="read-only"):
        write_draft(locked, book, "s", "b")
    assert locked.read_bytes() == b"mine" and stat.S_IMODE(locked.stat().st_mode) == 0o444
    with pytest.raises(core.InputError, match="does not exist"):
        write_draft(tmp_path / "nowhere" / "d.eml", book, "s", "b")
    written = write_draft(tmp_path / "new.eml", book, "s", "b")
    assert stat.S_IMODE(written.stat().st_mode) & 0o044 == 0o044 & ~_umask()  # readable like any file the user makes


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.slow
def test_the_command_line_draft_cases_end_in_one_line(tmp_path):
    """The workbook command with the draft on the workbook's own path, and with a custom model whose name
    holds line breaks and an encoded-word (read-only and linked targets: the test above)."""
    evil = "Evil\nBcc: x@example.com \u2028To: y =?utf-8?b?QmNjOiBldmls?= \u2029end"
    scenario = tmp_path / "evil.json"
    scenario.write_text(json.dumps({"model": {"name": evil, "layers": 2, "hidden": 256, "ffn": 512, "heads": 4, "vocab": 1000}}))
    runs = [("workbook", "--out", str(tmp_path / "same.xlsx"), "--email-draft", str(tmp_path / "same.xlsx")),
            ("workbook", "--out", str(tmp_path / "c.xlsx"), "--email-draft", str(tmp_path / "c.eml"), "--scenario", str(scenario))]
    same, named = cli_batch([(a, None) for a in runs])
    _one_line_exit_2(same, "is the workbook itself", "same path")
    assert not (tmp_path / "same.xlsx").exists()  # refused before anything is written
    assert named.returncode == 0, named.stderr
    msg = _parse((tmp_path / "c.eml").read_bytes())
    assert "Bcc" not in msg and "To" not in msg
    assert msg["Subject"] == "GPU plan: " + header_line(evil) + " lora"
    assert "=?utf-8?b?QmNjOiBldmls?=" in msg["Subject"]


@pytest.mark.slow  # over 0.45 s
def test_every_writer_removes_its_own_stale_temporaries_by_one_rule(tmp_path):
    book = tmp_path / "plan.xlsx"
    book.write_bytes(TINY_XLSX)
    old = time.time() - files.STALE_SECONDS - 60
    writers = {"draft": lambda: write_draft(tmp_path / "d.eml", book, "s", "b"),
               "scenario": lambda: write_scenario(tmp_path / "s.toml", {"gpu": "L40S"}),
               "workbook": lambda: write_workbook(tmp_path / "w.xlsx")}
    for what, write in writers.items():
        stale = [tmp_path / f".d.eml{files.TEMP_MARK}1-{what}", tmp_path / f".gpu-tco-{what}x.tmp"]  # current and older pattern
        fresh = tmp_path / f".s.toml{files.TEMP_MARK}2-{what}"
        keep = [tmp_path / f".gpu-tco-{what}-folder.tmp", tmp_path / f"gpu-tco-{what}.tmp"]  # a folder; not our pattern
        for p in stale + [fresh, keep[1]]:
            p.write_bytes(b"x")
        keep[0].mkdir()
        for p in stale + keep:
            os.utime(p, (old, old))
        write()
        assert not any(p.exists() for p in stale), what
        assert fresh.exists() and all(p.exists() for p in keep), what


_DRAFT_WRITER = """
import sys
from gpu_tco.core import files
if sys.argv[3] == "named":
    files._link_unnamed = lambda data, folder, name: False  # the named temporary of macOS and Windows
from gpu_tco.workbooks.email_draft import write_draft
while True:
    write_draft(sys.argv[1], sys.argv[2], "GPU plan", "body " * 200000)
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["unnamed", "named"])
def test_kill_9_while_writing_drafts_leaves_a_whole_draft_and_a_temporary_a_later_write_removes(tmp_path, how):
    book = tmp_path / "plan.xlsx"
    book.write_bytes(TINY_XLSX * 50000)
    draft = tmp_path / "d.eml"
    proc = subprocess.Popen([sys.executable, "-c", _DRAFT_WRITER, str(draft), str(book), how])
    deadline = time.time() + 30
    while not draft.exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.15)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _parse(draft.read_bytes())["Subject"] == "GPU plan"  # whole: old or new
    left = [p for p in tmp_path.iterdir() if files.TEMP_MARK in p.name]
    if how == "unnamed":
        assert left == []  # an unnamed file never had a name
    for p in left:  # a named temporary the kill left: the next write removes it once it is stale
        old = time.time() - files.STALE_SECONDS - 1
        os.utime(p, (old, old))
    write_draft(draft, book, "GPU plan", "body")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.eml", "plan.xlsx"]


# --- catalogs: text that cannot live in XML -----------------------------------------------------

# refused: C0 controls but tab and newline (a lone CR too), DEL, C1, lone surrogates, non-characters
REFUSED = ["\x00", "\x07", "\x0b", "\x0c", "\r", "\x1b", "\x1f", "\x7f", "\x85", "\x9f", "\ud800", "\udfff",
           "\ufdd0", "\ufdef", "\ufffe", "\uffff", "\U0001fffe", "\U0010ffff"]
# kept: tab, newline, CR LF (read as a newline), spaces and separators, format characters, astral,
# combining, right-to-left, private use, XML's own specials
KEPT = "\t|\n|\r\n|\u00a0|\u2028|\u2029|\u200b|\u202e|\ufeff|\U0001f600|e\u0301|\u6f22|\u0627\u0644|\ue000|\U000f0000|&<>\"']]>"

TABLE_BASES = {"gpus": "L40S", "models": "Llama-3-8B", "offers": "Lambda 8x H100 SXM"}


def _columns(table: str) -> list[str]:
    with open(catalog.DATA_DIR / f"{table}.csv", encoding="utf-8") as fh:
        return next(csv.reader(fh))


def _write_rows(folder: Path, table: str, rows: list[dict]) -> Path:
    cols = _columns(table)
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=cols, extrasaction="ignore", lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c, "") for c in cols})
    path = folder / f"{table}.csv"
    path.write_bytes(text.getvalue().encode("utf-8", "surrogatepass"))  # a lone surrogate as its (invalid) UTF-8 bytes
    return path


def _base_row(table: str) -> dict:
    t = catalog.tables()[table]
    return {**t.rows[t.find(TABLE_BASES[table])], "name": "Zq9-Row", "aliases": ""}


def _text_fields(table: str) -> list[str]:
    # as_of holds dates (below); server_sizes holds GPU counts (checked on load, tests/test_hardening.py)
    return [c for c in _columns(table) if c in catalog.TEXT_COLUMNS and c not in ("as_of", "server_sizes")]


def test_every_refused_code_point_in_every_text_field_is_refused_naming_file_row_and_column(tmp_path):
    """Each refused class in each text field: through the whole loading of a table for the name field,
    through the parsing of the user's file (where the loading refuses text) for the others."""
    cases = 0
    for table in TABLE_BASES:
        base = _base_row(table)
        columns = _columns(table)
        for field in _text_fields(table) + ["as_of"]:
            for ch in REFUSED:
                row = {**base, field: f"{base[field] or 'x'}{ch}tail" if field != "name" else f"Zq9{ch}Row"}
                path = _write_rows(tmp_path, table, [row])
                with pytest.raises(core.CatalogError) as err:
                    if field == "name":
                        catalog.load_table(table, user_dir=tmp_path)
                    else:
                        catalog._parse_file(path, table, columns)
                message = str(err.value)
                assert "\n" not in message and message.startswith(f"{path}, row 2"), (table, field, repr(ch), message)
                # a lone surrogate has no UTF-8 form: its bytes are refused as "not UTF-8" on that row
                assert f"column {field}:" in message or "is not UTF-8 text" in message, (table, field, repr(ch), message)
                cases += 1
    assert cases == len(REFUSED) * sum(len(_text_fields(t)) + 1 for t in TABLE_BASES)


def _hostile_rows() -> dict[str, dict]:
    """One row per catalog whose every text field holds every kept code point class; the offer rents the GPU."""
    rows = {}
    for table in TABLE_BASES:
        row = _base_row(table)
        for field in _text_fields(table):
            # a column naming a row of another catalog (the offer's GPU, the model's release weight format) is no free text
            row[field] = f"Zq9{table}{field} {KEPT}" if field not in ("gpu", "release_weights_dtype") else ""
        rows[table] = row
    rows["offers"]["gpu"] = rows["gpus"]["name"]
    rows["offers"]["price_type"] = "on-demand " + KEPT
    for row in rows.values():
        row["aliases"] = f"Zq9{row['name'][3:9]}alias {KEPT}"
    return rows


def _load_hostile_catalogs(folder: Path) -> dict[str, dict]:
    rows = _hostile_rows()
    for table, row in rows.items():
        _write_rows(folder, table, [row])
    os.environ["GPU_TCO_CONFIG_DIR"] = str(folder)
    catalog.reload()
    return rows


def _restore_catalogs(previous):
    if previous is None:
        os.environ.pop("GPU_TCO_CONFIG_DIR", None)
    else:
        os.environ["GPU_TCO_CONFIG_DIR"] = previous
    catalog.reload()


def _hostile_inputs(rows):
    return {"gpu": rows["gpus"]["name"], "model": rows["models"]["name"], "offer": rows["offers"]["name"], "n_gpus": 1,
            "method": "qlora"}


@book("hostile-text")
def _hostile_text_book(folder: Path):
    previous = os.environ.get("GPU_TCO_CONFIG_DIR")
    try:
        rows = _load_hostile_catalogs(folder)
        path = write_workbook(folder / "hostile.xlsx", _hostile_inputs(rows))
    finally:
        _restore_catalogs(previous)
    return path, {t: r["name"] for t, r in rows.items()}


def test_every_kept_code_point_reaches_a_workbook_that_openpyxl_and_libreoffice_open(tmp_path, recalculated):
    previous = os.environ.get("GPU_TCO_CONFIG_DIR")
    try:
        rows = _load_hostile_catalogs(tmp_path)
        path = write_workbook(tmp_path / "hostile.xlsx", _hostile_inputs(rows))
    finally:
        _restore_catalogs(previous)
    wb = load_workbook(path)  # well-formed XML: openpyxl parses every sheet
    texts = {c.value for ws in wb.worksheets for r in ws.iter_rows() for c in r if isinstance(c.value, str)}
    expected = {r["name"].replace("\r\n", "\n") for r in rows.values()}
    assert expected <= texts
    out = recalculated["hostile-text"]
    assert out.sheets and not out.errors()
    lo_texts = {v for rows_ in out.sheets.values() for r in rows_ for v in r}
    for table, name in out.meta.items():  # LibreOffice opened it and shows each name in full
        assert any(name.replace("\r\n", "\n") == v for v in lo_texts), (table, name)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=20), min_size=3, max_size=3))
@example(["Zq9\ufffe", "v", "s"])
@example(["Zq9", "\U0010fffe", "\ud800"])
def test_random_catalog_text_is_refused_in_one_line_or_lives_in_an_xlsx_cell(tmp_path_factory, texts):
    folder = tmp_path_factory.mktemp("cat")
    row = {**_base_row("gpus"), "name": "Zq9" + texts[0], "vendor": texts[1], "source": texts[2]}
    _write_rows(folder, "gpus", [row])
    try:
        table = catalog.load_table("gpus", user_dir=folder)
    except core.CatalogError as err:
        assert "\n" not in str(err) and ", row 2" in str(err)
        assert any(catalog.NOT_TEXT.search(t.replace("\r\n", "\n")) for t in texts)
        return
    loaded = table.rows[-1] if table.rows[-1]["name"] == row["name"].strip().replace("\r\n", "\n") else None
    assert loaded is not None or catalog.normalize(row["name"]) in {catalog.normalize(n) for n in table.names[:-1]}
    values = [v for k, v in (loaded or {}).items() if k in ("name", "vendor", "source")]
    wb = Workbook()
    for i, v in enumerate(values, start=1):
        wb.active.cell(row=i, column=1, value=v)
    buffer = io.BytesIO()
    wb.save(buffer)
    back = load_workbook(io.BytesIO(buffer.getvalue())).active
    assert [back.cell(row=i, column=1).value or "" for i in range(1, len(values) + 1)] == values


def test_bad_as_of_dates_are_refused_naming_file_row_and_column(tmp_path):
    base = _base_row("offers")
    for bad in ("soon", "=NOW()", "2026-13", "2026-02-30", "26-01", "2026/01/01", "1066"):
        _write_rows(tmp_path, "offers", [{**base, "as_of": bad}])
        with pytest.raises(core.CatalogError, match=r"offers.csv, row 2, column as_of: .* is not a date; allowed: YYYY, YYYY-MM"):
            catalog.load_table("offers", user_dir=tmp_path)
    for good in ("2026", "2026-09", "2024-02-29", ""):
        _write_rows(tmp_path, "offers", [{**base, "as_of": good}])
        assert catalog.load_table("offers", user_dir=tmp_path).rows[-1]["as_of"] == good


# --- reading files: one line, exit 2, from every command ------------------------------------------

COMMANDS = [("estimate",), ("plan",), ("tco",), ("breakeven",), ("offers",), ("gpus",), ("models",),
            ("explain", "rent_usd_per_gpu_hour"), ("workbook", "--out", "{out}")]


@pytest.mark.slow
def test_broken_user_catalogs_config_folders_and_scenarios_end_in_one_line_and_exit_2(tmp_path):
    broken = {}
    for name, as_of in (("soon", "soon"), ("now", "=NOW()")):
        broken[name] = tmp_path / name
        broken[name].mkdir()
        _write_rows(broken[name], "offers", [{**_base_row("offers"), "as_of": as_of}])
    broken["latin1"] = tmp_path / "latin1"
    broken["latin1"].mkdir()
    (broken["latin1"] / "gpus.csv").write_bytes("name,vendor\nCaf\u00e9,x\n".encode("latin-1"))
    broken["fifo"] = tmp_path / "fifo"
    broken["fifo"].mkdir()
    os.mkfifo(broken["fifo"] / "models.csv")
    broken["folder"] = tmp_path / "folder"
    (broken["folder"] / "gpus.csv").mkdir(parents=True)
    broken["long"] = tmp_path / ("y" * 300)
    expected = {"soon": "column as_of", "now": "column as_of", "latin1": "row 2: is not UTF-8 text",
                "fifo": "is a named pipe", "folder": "is a folder", "long": "File name too long"}
    pipe = tmp_path / "s.json"
    os.mkfifo(pipe)
    cases, messages = [], []
    for name, config in broken.items():  # every command for one, three commands for each other configuration
        for cmd in COMMANDS if name == "soon" else (COMMANDS[0], COMMANDS[1], COMMANDS[-1]):
            cases.append((tuple(a.replace("{out}", str(tmp_path / "w.xlsx")) for a in cmd), str(config)))
            messages.append((expected[name], cmd[0], name))
    for args, message in ((("plan", "--scenario", str(pipe)), "is a named pipe"),
                          (("estimate", "--scenario", "/dev/zero"), "is a device"),
                          (("workbook", "--out", str(tmp_path / "w.xlsx"), "--scenario", str(pipe)), "is a named pipe")):
        cases.append((args, None))
        messages.append((message, args[0], "scenario"))
    start = time.time()
    for (message, cmd, name), ran in zip(messages, cli_batch(cases), strict=True):
        _one_line_exit_2(ran, message, (cmd, name))
    assert time.time() - start < 60  # nothing waits for a pipe's writer
    with pytest.raises(core.InputError, match="named pipe"):
        read_scenario(pipe)
    form = _cli("form", "--scenario", str(pipe), "--screenshot", str(tmp_path / "f.png"))  # the form, as `gpu-tco form`
    # the form's own line is its last: Qt's offscreen platform may print a notice of its own first
    assert form.returncode == 2 and "is a named pipe" in form.stderr.strip().splitlines()[-1], form.stderr[-400:]
    assert "Traceback" not in form.stderr and "internal error" not in form.stderr


# --- numbers: every input at the ends of its range ------------------------------------------------

def _extremes(inp) -> list[float]:
    """The allowed values at the ends of an input's range: its bounds, the least value above an exclusive
    bound, 0 and the least non-zero value where 0 stands for something, and tiny values where allowed."""
    if inp.kind in ("choice", "flag"):
        return []
    candidates = [inp.minimum, inp.maximum, inp.zero_or_min, 0.0, 5e-324, 1e-300, 1.0]
    if inp.minimum is not None:
        candidates.append(float(np.nextafter(inp.minimum, np.inf)))
    out = set()
    for v in candidates:
        if v is None:
            continue
        try:
            out.add(float(check_number(inp, v)))
        except core.GpuTcoError:
            pass
    return sorted(out)


NUMERIC = [i for i in INPUTS if _extremes(i)]
LAYOUT = ("pipeline_parallel", "context_parallel", "expert_parallel")  # with tensor_parallel: n_gpus = t x p x cp x d
BASES = [{}, {"buy": 1}, {"gpu": "RTX-4090", "n_gpus": 1, "method": "qlora", "model": "Llama-3-8B", "offer": "none"},
         {"model": "Mixtral-8x7B", "gpu": "H100-SXM", "n_gpus": 8, "tensor_parallel": 8, "method": "full"}]
# documented sentinels: -1 = never (payback, break-even), 4 = does not pay back (verdict_code); both finite


def test_each_input_at_its_extremes_gives_only_finite_results():
    """Every numeric input at each end of its range, one at a time, on four jobs (rent, buy, one consumer
    card, a tensor-parallel mixture of experts): one vectorised call per job, a row per (input, value)."""
    for base in BASES:
        rows = [(inp.name, v) for inp in NUMERIC if inp.name not in base for v in _extremes(inp)
                if not (inp.name == "n_gpus" and "tensor_parallel" in base)]
        names = sorted({name for name, _ in rows} | set(base))
        sweep = {}
        for name in names:
            default = base.get(name, core.DEFAULTS[name])
            column = [v if n == name else default for n, v in rows]
            if name == "n_gpus":  # the parallel degrees must divide n_gpus: their rows use as many GPUs (times the base's t)
                column = [v if n in ("n_gpus", "tensor_parallel") else v * base.get("tensor_parallel", 1) if n in LAYOUT
                          else default for n, v in rows]
            sweep[name] = column
        result = core.evaluate(sweep)
        for name, value in result.items():
            arr = np.asarray(value)
            if arr.dtype.kind in "fiu":
                bad = np.flatnonzero(~np.isfinite(arr.astype(float)))
                assert bad.size == 0, (name, base, rows[bad[0]], arr[bad[0]])


def test_random_mixes_of_extremes_give_only_finite_results():
    rng = np.random.default_rng(29)
    n = 8000
    sweep = {i.name: rng.choice(np.array(_extremes(i) + [float(i.default)] * 2), n)
             for i in NUMERIC if i.name not in ("tensor_parallel", *LAYOUT)}
    sweep["buy"] = rng.integers(0, 2, n)
    sweep["gpu"] = list(rng.choice(np.array(catalog.gpus().names[:20], dtype=object), n))
    sweep["model"] = list(rng.choice(np.array(["Llama-3-8B", "Llama-3-70B", "Mixtral-8x7B"], dtype=object), n))
    sweep["method"] = list(rng.choice(np.array(["full", "lora", "qlora"], dtype=object), n))
    result = core.evaluate(sweep)
    for name, value in result.items():
        arr = np.asarray(value)
        if arr.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(arr))
            assert bad.size == 0, (name, {k: (v[bad[0]] if len(v) == n else v) for k, v in sweep.items()})


# every rule's allowed ends: the least non-zero number (1e-6), the largest (1e15), 0 where allowed
RULE_ENDS = {"pos": [1e-6, 1e15], "nonneg": [0, 1e-6, 1e15], "frac_pos": [0.01, 1], "frac": [0, 1], "count": [1, 1e15],
             "flag": [0, 1], "pct": [0, 100], "billing": [1, 2_678_400], "whole": [0, 1, 1e15], "months": [0, 120]}


def test_catalog_numbers_at_the_ends_of_their_ranges_give_only_finite_results(tmp_path):
    """A user GPU, model and offer per (column, allowed end), loaded from files, evaluated in one call each."""
    names = {}
    for table in ("gpus", "models", "offers"):
        base, rows = _base_row(table), []
        for column, rule in catalog.RULES[table].items():
            for k, value in enumerate(RULE_ENDS[rule]):
                row = {**base, "name": f"Zq9-{column}-{k}", column: value}
                try:
                    catalog._check_row(table, row, "test", 2)  # cross-field rules (kv_heads <= heads, ...) may refuse
                except core.CatalogError:
                    continue
                rows.append(row)
        _write_rows(tmp_path, table, rows)
        names[table] = [r["name"] for r in rows]
    previous = os.environ.get("GPU_TCO_CONFIG_DIR")
    os.environ["GPU_TCO_CONFIG_DIR"] = str(tmp_path)
    try:
        catalog.reload()
        gpus, models = names["gpus"], names["models"]
        sweeps = [{"gpu": gpus * 2, "buy": [0] * len(gpus) + [1] * len(gpus), "offer": "none", "usd_per_gpu_hour_rented": 2.0,
                   "model": "Llama-3-8B", "method": "qlora"},
                  {"model": models * 2, "method": ["full"] * len(models) + ["lora"] * len(models), "gpu": "H100-SXM"},
                  {"offer": names["offers"] * 2, "gpu": "H100-SXM", "allow_interruptible": 1,
                   "buy": [0] * len(names["offers"]) + [1] * len(names["offers"])}]
        for sweep in sweeps:
            for name, value in core.evaluate(sweep).items():
                arr = np.asarray(value)
                if arr.dtype.kind == "f":
                    bad = np.flatnonzero(~np.isfinite(arr))
                    assert bad.size == 0, (name, [sweep.get("gpu"), sweep.get("model")], bad[:3])
    finally:
        _restore_catalogs(previous)


TINY = {"job_hours": 5e-324, "usd_per_gpu_hour_rented": 1e-300, "measured_tokens_per_s": 5e-324, "api_usd_per_mtok": 1e-300,
        "tokens": 0.5, "epochs": 1e-9}


@pytest.mark.parametrize("name, value", TINY.items())
def test_tiny_values_that_would_overflow_are_refused_with_the_allowed_range(name, value):
    with pytest.raises(core.InputError) as err:
        core.evaluate({name: value})
    message = str(err.value)
    assert message.startswith(f"{name}: ") and "too small; allowed:" in message and ">=" in message


@pytest.mark.slow
def test_a_workbook_and_explain_at_the_least_allowed_values_hold_no_inf_nan_or_none(tmp_path):
    least = {"job_hours": 0.01, "usd_per_gpu_hour_rented": 0.0001, "measured_tokens_per_s": 0.001, "api_usd_per_mtok": 0.0001,
             "tokens": 1, "epochs": 0.001}
    path = write_workbook(tmp_path / "least.xlsx", least)
    with zipfile.ZipFile(path) as z:
        xml = "".join(z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/worksheets/"))
    cached = re.findall(r"</f><v>([^<]*)</v>", xml)
    # "none" is the no-offer name a bought GPU without a cloud offer shows; Python's None would be written "None"
    assert cached and not [v for v in cached if v.lower() in ("inf", "-inf", "nan") or v == "None"]
    args = [a for k, v in least.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    out = _cli("explain", "rent_usd_per_useful_gpu_hour", *args)
    assert out.returncode == 0 and "= None" not in out.stdout and "inf" not in out.stdout.lower().replace("info", "")
    for quantity in ("rent_usd_per_useful_gpu_hour", "option_usd_per_mtok_train", "decode_usd_per_mtok_rent",
                     "selfhost_breakeven_mtok_per_month", "payback_months"):
        for name, value in least.items():
            shown = core.explain(quantity, {name: value})
            figures = [shown["value"]] + [v for _, v, _ in shown["inputs"]]
            assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in figures), (quantity, name, shown)
    (refused,) = cli_batch([(("explain", "rent_usd_per_useful_gpu_hour", "--job-hours", "5e-324"), None)])
    _one_line_exit_2(refused, "job_hours: 4.94066e-324 is too small; allowed: 0 (the estimated training time) or a number >= 0.01",
                     "explain")


# --- scenario files: Save writes only what Open reads back ------------------------------------------

scenario_values = st.one_of(
    st.booleans(), st.integers(min_value=-2**63, max_value=2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20), st.lists(st.text(max_size=10), max_size=3))
scenario_data = st.dictionaries(
    st.one_of(st.sampled_from([i.name for i in INPUTS] + ["gpus"]), st.text(max_size=8)),
    st.one_of(scenario_values, st.dictionaries(st.text(max_size=8), scenario_values, max_size=4)), max_size=6)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario_data)
@example({"model": {"name": "My\x7fModel", "layers": 2}})
@example({"model": {"name": "a\ud800b"}})
@example({"a b": "x\x00\x1f\x85\u2028\"\\", "tokens": 1e16, "mfu": 5e-324, "gpus": ["H100-SXM"]})
def test_every_scenario_value_round_trips_through_json_and_toml_or_is_refused_on_both_sides(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("scn")
    surrogate = re.compile("[\ud800-\udfff]")
    has_surrogate = any(surrogate.search(t) for t in _texts(data))
    for suffix in (".json", ".toml"):
        path = folder / f"s{suffix}"
        try:
            write_scenario(path, data)
        except core.InputError as err:
            assert has_surrogate and "surrogate" in str(err) and "\n" not in str(err), (suffix, str(err))
            assert not path.exists()
            continue
        assert not has_surrogate
        assert read_scenario(path) == data, (suffix, path.read_text(encoding="utf-8"))
    if has_surrogate:  # the same value reaching Open through a JSON escape is refused there too
        path = folder / "escaped.json"
        path.write_text(json.dumps(data, ensure_ascii=True))
        with pytest.raises(core.InputError, match="surrogate"):
            read_scenario(path)


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


@pytest.mark.slow  # over 0.45 s
def test_a_saved_scenario_with_a_del_character_reopens_and_is_judged_at_the_field(tmp_path):
    data = {"model": {"name": "My\x7fModel", "layers": 2, "hidden": 256, "ffn": 512, "heads": 4, "vocab": 1000}}
    path = write_scenario(tmp_path / "s.toml", data)
    assert "\\u007F" in path.read_text(encoding="utf-8") and read_scenario(path) == data
    assert "\x7f" not in scenario_text(data, toml=True)
    escaped = tmp_path / "lone.json"
    escaped.write_text('{"model": "x\\ud800"}')
    runs = [("plan", "--scenario", str(path)), ("estimate", "--scenario", str(escaped)),
            ("workbook", "--out", str(tmp_path / "w.xlsx"), "--scenario", str(escaped))]
    outs = cli_batch([(a, None) for a in runs])
    _one_line_exit_2(outs[0], "model.name", "DEL in a model name")
    for out in outs[1:]:
        _one_line_exit_2(out, "surrogate", "lone surrogate")
        assert "\\ud800" in out.stderr


def test_the_shared_writer_never_replaces_a_read_only_file_nor_caches_a_non_finite_value(tmp_path):
    from gpu_tco.workbooks.xlsx import save_atomically
    locked = tmp_path / "locked.json"
    locked.write_bytes(b"mine")
    locked.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only"):
        files.write_atomically(locked, b"new")
    with pytest.raises(core.InputError, match="read-only"):
        write_scenario(locked, {"gpu": "L40S"})
    assert locked.read_bytes() == b"mine" and list(tmp_path.iterdir()) == [locked]
    wb = Workbook()
    wb.active["A1"], wb.active["A2"] = "=1/0", "=2"
    path = save_atomically(wb, {f"{wb.active.title}!A1": float("inf"), f"{wb.active.title}!A2": 2.0}, tmp_path / "b.xlsx")
    with zipfile.ZipFile(path) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode("utf-8")
    assert "<v>2.0</v>" in xml and "inf" not in xml.lower()
    assert load_workbook(path)["Sheet"]["A1"].value == "=1/0"
