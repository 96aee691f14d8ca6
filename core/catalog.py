"""Catalogs: GPUs, models and the small choice tables, loaded from CSV.

Every catalog is a CSV file in ``core/data`` whose rows carry a ``source``
(and the big ones an ``as_of`` date).  Users add or override rows without
touching the package by putting a file of the same name in their config
directory (``user_config_dir()``); a row whose ``name`` matches a built-in
row replaces it, any other row is added.  Names are matched tolerantly
("h100 sxm", "H100 SXM5 80GB" and "H100-SXM" are the same GPU).
"""
from __future__ import annotations

import csv
import functools
import math
import os
import re
import sys
from itertools import repeat
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .errors import CatalogError, InputError, show
from .files import read_regular_file
from .hf_config import looks_like_path
from .names import normalize, normalized, split_weight_format, words
from .text import allowed_hint, did_you_mean

DATA_DIR = Path(__file__).with_name("data")

# Columns holding text; every other column is a number.
TEXT_COLUMNS = {
    "name", "aliases", "vendor", "form_factor", "interconnect", "purchase_basis", "server_sizes",
    "source", "as_of", "family", "description", "accuracy_effect",
    "provider", "instance", "gpu", "price_type", "region", "fabric",  # offers
    "model", "catalog_model", "price_key",  # apis
    "launch", "label",  # engines: the command that starts the engine, its name as people write it
    "pipeline_max_sharding",  # frameworks: a shardings.csv name
    "release_weights_dtype",  # models: the weight format its publisher released (a weight_dtypes name; empty: 16-bit)
}
# Columns a user row may leave empty (they default to 0 / "").
OPTIONAL_COLUMNS = {
    "aliases", "source", "as_of", "description", "purchase_basis", "notes", "accuracy_effect", "release_weights_dtype",
    # offers: a user row needs gpu, gpus_per_instance, usd_per_gpu_hour and billing_increment_s
    "provider", "instance", "price_type", "region", "interruptible", "commitment_months",
    "usd_per_instance_hour", "commission_pct", "usd_per_gb_month_storage", "usd_per_gb_egress",
    # offers: what connects the GPUs (0 = one machine of gpus_per_instance, no network between machines)
    "gpus_per_node", "fabric", "fabric_gbps_per_gpu", "max_gpus_per_job", "min_billed_hours",
    # models: mixture-of-experts and latent-attention details (0 = not used)
    "shared_experts", "dense_layers", "dense_ffn", "q_lora_rank", "kv_lora_rank", "qk_rope_dim", "v_head_dim", "encoder_params",
    # models: layers with a fixed-size state, sparse attention, per-layer attention widths, latent experts (0 = not used)
    "attention_layers", "state_layers", "state_layer_params", "state_elements_per_layer", "state_conv_elements_per_layer", "state_bits", "sparse_attention_tokens", "indexer_heads", "indexer_head_dim", "global_kv_heads", "global_head_dim", "attention_layer_params", "moe_latent_dim",
    "compressed_kv_layers", "indexer_kv_layers",
    # gpus: a card without FP4 tensor cores leaves it empty (0); card_share empty: a whole card
    "fp4_dense_tflops", "card_share",
    # precisions: the FP8 recipe's columns (empty: a 16/32-bit precision; linear_input_bytes empty: activation_bytes;
    # fp8_mfu_factor empty: 1)
    "fp8_linears", "block_scaled", "fp8_weight_copy_bytes", "linear_input_bytes", "fp8_mfu_factor",
    # gpus: GPU counts one server holds as sold (empty: "1;2;4;8", PCIe cards) and the largest (0: 8)
    "server_sizes", "server_gpus",
    # gpus: per-card decode and prefill efficiency factors (empty: 1) and the FP16-accumulate peak (empty: the card has none
    # apart from bf16_dense_tflops); engines: fp16_accumulate (empty: 0, the engine accumulates in FP32) and
    # disaggregated_mode (empty: 0, no separate prefill and decode replicas), static_batching (empty: 0, chunked prefill) and
    # prefill_half_tokens (empty: 0, no prompt-length loss). Built-in rows leave some of them empty, so a
    # built-in row copied into the user's file must load as it is
    "decode_efficiency_factor", "prefill_efficiency_factor", "fp16_accumulate_dense_tflops", "fp16_accumulate", "disaggregated_mode",
    # gpus: the vendor's reference server's power besides its GPUs, per GPU slot (empty: 575 W, the DGX H100's)
    "system_w_per_slot",
    "static_batching", "prefill_half_tokens",
    # frameworks: lora_fp32_adapter_inputs (empty: 0, adapters in the weights' dtype); pipeline_max_sharding (empty: pipeline
    # stages run beside any sharding)
    "lora_fp32_adapter_inputs", "pipeline_max_sharding",
    # apis: a user row needs name, usd_per_mtok_input and usd_per_mtok_output
    "model", "catalog_model", "price_key",
}

# Characters no text field may hold: what an .xlsx (XML 1.0) cannot carry (C0 controls other than tab
# and newline, lone surrogates, U+FFFE and U+FFFF), the other Unicode non-characters (U+FDD0-U+FDEF
# and the last two code points of every plane: "not text" by definition), and DEL and the C1 controls
# (invisible; U+0085 ends a line in some programs).  A line break is a newline; the carriage return
# of a Windows line end (CR LF) inside a quoted field is read as a newline.
NONCHARACTERS = "\ufdd0-\ufdef" + "".join(chr(p + 0xFFFE) + chr(p + 0xFFFF) for p in range(0, 0x110000, 0x10000))
NOT_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{NONCHARACTERS}]")
ASCII_NOT_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # NOT_TEXT within ASCII: the same test, ten times faster
CONTROL_CHARACTERS = NOT_TEXT  # the name custom architectures' text fields are checked with


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be catalog or scenario text (NOT_TEXT), in plain words, or None."""
    bad = NOT_TEXT.search(value)
    if bad is None:
        return None
    c = ord(bad.group())
    if c < 0x20:
        what = f"a control character (code {c})"
    elif c < 0xA0:
        what = f"a control character (U+{c:04X})"
    elif 0xD800 <= c <= 0xDFFF:
        what = f"U+{c:04X}, half of a UTF-16 surrogate pair (not a character)"
    else:
        what = f"U+{c:04X}, a Unicode non-character"
    return f"holds {what} at position {bad.start() + 1}; remove it (it is not printable text, and a workbook cannot hold it safely)"


AS_OF = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


@functools.lru_cache(maxsize=4096)  # a refreshed catalog repeats one date 100,000 times
def as_of_problem(value: str) -> str | None:
    """Why ``value`` is not an as_of date (YYYY, YYYY-MM or YYYY-MM-DD, a real date), or None."""
    import datetime
    m = AS_OF.fullmatch(value)
    if m:
        try:
            datetime.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
            if int(m.group(1)) >= 1900:
                return None
        except ValueError:
            pass
    return f"{show(value)} is not a date; allowed: YYYY, YYYY-MM or YYYY-MM-DD (e.g. 2026-09) or empty"

def user_config_dir() -> Path:
    """Where users keep their own catalog rows.

    ``GPU_TCO_CONFIG_DIR`` wins; otherwise the platform convention:
    %APPDATA%\\gpu-tco on Windows, ~/Library/Application Support/gpu-tco on
    macOS, $XDG_CONFIG_HOME/gpu-tco (default ~/.config/gpu-tco) elsewhere.
    """
    env = os.environ.get("GPU_TCO_CONFIG_DIR")
    if env:
        return Path(env)
    if sys.platform.startswith("win"):
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "gpu-tco"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "gpu-tco"
    return Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "gpu-tco"


class Table:
    """One catalog: rows by canonical name, columns for fast lookups."""

    def __init__(self, name: str, rows: list[dict], columns: list[str], files: list[str]):
        self.name = name
        self.columns = columns
        self.numeric = [c for c in columns if c not in TEXT_COLUMNS]
        self.files = files
        self.rows: list[dict] = []
        self._index: dict[str, int] = {}
        self._np_cache: dict[str, object] = {}
        self._found: dict[str, int] = {}
        self._names: tuple[str, ...] | None = None
        self.col: dict[str, list] = {c: [] for c in columns}
        for row in rows:
            self._append(row)
        # rows from the files (shipped and the user's); a row added at run time (Table.add) comes after
        # these, and an architecture given as a parameter count or as fields never becomes a row
        self.file_rows = len(self.rows)
        self.overrides: dict[str, tuple[str, str]] = {}  # built-in name -> (the user's name for it, file)
        self.user_rows = 0
        self.origin: dict[int, tuple[str, int]] = {}  # row index -> (the user's file, its line), for messages

    # building --------------------------------------------------------------
    def _append(self, row: dict) -> int:
        existing = self._index.get(normalize(row["name"]))
        if existing is not None and self.rows[existing]["name"].lower() == row["name"].lower():
            i = existing  # override a built-in row of the same name
            self.rows[i] = row
            for c in self.columns:
                self.col[c][i] = row.get(c, 0 if c in self.numeric else "")
        else:
            i = len(self.rows)
            self.rows.append(row)
            for c in self.columns:
                self.col[c].append(row.get(c, 0 if c in self.numeric else ""))
        self._index[normalize(row["name"])] = i
        for alias in str(row.get("aliases", "") or "").split(";"):
            if alias.strip():
                self._index.setdefault(normalize(alias), i)
        self._np_cache.clear()
        self._found.clear()
        self._names = None
        return i

    def _extend(self, rows: list[dict], keys: list[str]) -> int:
        """Append rows whose names (normalised: ``keys``) no row of the table has, one pass per column (a refreshed
        catalog of 100,000 offers loads in linear time); returns the index of the first."""
        from operator import itemgetter
        start = len(self.rows)
        self.rows.extend(rows)
        for c in self.columns:
            try:
                self.col[c].extend(map(itemgetter(c), rows))
            except KeyError:  # a row without the column: its default
                default = 0 if c in self.numeric else ""
                del self.col[c][start:]
                self.col[c].extend([r.get(c, default) for r in rows])
        index = self._index
        for i, (row, key) in enumerate(zip(rows, keys), start):
            index[key] = i
            aliases = row.get("aliases")
            if aliases:
                for alias in str(aliases).split(";"):
                    if alias.strip():
                        index.setdefault(normalize(alias), i)
        self._np_cache.clear()
        self._found.clear()
        self._names = None
        return start

    def add(self, row: dict) -> int:
        """Add (or replace) a row; returns its index.  A table of the current snapshot that gains a row
        gets a new snapshot published (``snapshot()``), so everything derived from the catalogs follows."""
        full = {c: row.get(c, 0 if c in self.numeric else "") for c in self.columns}
        full.update(row)
        i = self._append(full)
        _table_changed(self)
        return i

    # lookups ---------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """The rows' names in row order: a snapshot, so a caller can neither change the catalog
        through it nor see it change under them when a row is added."""
        if self._names is None:
            self._names = tuple(self.col["name"])
        return self._names

    def holds_name(self, value) -> bool:
        """True when ``value`` is a row's name or alias as it is (no suffix dropped, no close spelling)."""
        return normalize(value) in self._index
    def _exact(self) -> dict[str, int]:
        """{row name: row index} for ``names`` (rebuilt with it)."""
        names = self.names
        if getattr(self, "_exact_for", None) is not names:
            exact: dict[str, int] = {}
            for i, n in enumerate(names):  # names never collide once normalised (a user row of a built-in name overrides it)
                exact.setdefault(n, i)
            self._exact_map, self._exact_for = exact, names
        return self._exact_map

    def exact_names(self) -> Mapping[str, int]:
        """{row name as written: row index}, read-only (what ``find`` returns for a row's own name)."""
        return MappingProxyType(self._exact())

    def known(self, value) -> int | None:
        """Row index of a value ``find`` has already matched, without matching it again (the fast path of a
        sweep's or a form's repeated lookups); None for a value not looked up yet."""
        return self._found.get(value)

    def find(self, value) -> int | None:
        """Row index for a name, alias or close spelling; None if unknown."""
        hit = self._found.get(value)
        if hit is not None:
            return hit
        if isinstance(value, str):  # a row's own name (the names a sweep passes back)
            hit = self._exact().get(value)
            if hit is not None:
                self._found[value] = hit
                return hit
        hit = self._find(value)
        if hit is not None:
            self._found[value] = hit
        return hit

    def _find(self, value) -> int | None:
        key = normalize(value)
        i = self._index.get(key)
        if i is not None:
            return i
        # "H100 SXM5 80GB": drop a trailing memory size if it agrees with the row ("A100 40GB" stays distinct)
        parts = words(value)
        m = re.fullmatch(r"(\d+)(gb|gib|g)", parts[-1]) if len(parts) > 1 else None
        if m and "memory_gib" in self.col:
            j = self._index.get(normalize(" ".join(parts[:-1])))
            if j is not None and float(self.col["memory_gib"][j]) == float(m.group(1)):
                return j
        if self.name == "models":
            return self._find_model(str(value))
        return None

    def _find_model(self, text: str) -> int | None:
        """Model names as people type them: a Hugging Face id with its organisation
        ("meta-llama/Meta-Llama-3-70B-Instruct"), fine-tune suffixes (-Instruct, -Chat, -hf,
        -it, -v0.1, -2407) and a size alone when one model has it ("8x7B")."""
        if looks_like_path(text):
            return None  # a path names a config.json (hf_config), never a catalog model by its folder's name
        for base in base_model_candidates(text):  # the longest name the catalog knows: "DeepSeek-V3.2", not "DeepSeek"
            i = self._index.get(normalize(base))
            if i is not None:
                return i
        base, _ = base_model_name(text)
        key = normalize(base)
        if len(key) >= 3 and "x" in key:  # "8x7b": the one mixture-of-experts model of that shape
            hits = {j for k, j in self._index.items() if k.endswith(key)}
            if len(hits) == 1:
                return hits.pop()
        return None

    def match_note(self, value) -> str | None:
        """A sentence saying how a name that is not a catalog name or alias was read, or None.  An alias that names an
        instruction-tuned release (the id a serving command starts: "...-Instruct") is said too: it is another model
        than the row's base checkpoint, with the same architecture."""
        if not isinstance(value, str):
            return None
        if normalize(value) in self._index and not (  # an alias naming a chat or a quantized release is said too
                self.name == "models" and any(s.lower() in CHAT_SUFFIXES for s in base_model_name(value)[1])
                or self.name == "models" and split_weight_format(str(value).strip().rsplit("/", 1)[-1])[1]):
            return None
        i = self.find(value)
        if i is None:
            return None
        name = self.rows[i]["name"]
        if self.name == "models":
            _, removed = base_model_name(value)
            _, fmt, suffix = split_weight_format(str(value).strip().rsplit("/", 1)[-1])
            if fmt:
                others = [r for r in removed if r != suffix and normalize(r) not in normalize(name)]
                return (f'{self.name[:-1]} "{value}" is read as {name} with weights in {fmt} (weights_dtype, from the name\'s '
                        f'-{suffix})' + (f"; a fine-tuned variant ({', '.join('-' + r for r in others)}) has its base model's "
                                         "architecture" if others else ""))
            if removed:
                return (f'{self.name[:-1]} "{value}" is read as {name}: a fine-tuned variant '
                        f"({', '.join('-' + r for r in removed)}) has its base model's architecture")
        return f'{self.name[:-1]} "{value}" is read as {name}'

    def variants(self, value) -> list[int]:
        """Rows whose name starts with the typed name ("h100": H100-SXM, H100-PCIe, H100-NVL; "h100 sxm mig": its MIG slices)."""
        key = normalize(value)
        if not key:
            return []
        # MIG slices of a card are not variants of it ("h100" is not "H100-SXM MIG 1g.10gb"), unless asked for
        slices_too = self.name != "gpus" or "mig" in key
        return [i for i, r in enumerate(self.rows) if normalize(r["name"]).startswith(key) and (slices_too or not mig_profile(r))]

    def resolve(self, value, field: str) -> int:
        i = self.find(value) if isinstance(value, str) and value.strip() else None
        if i is None:
            hint = allowed_hint(value, self.names)
            listed = ", ".join(self.names) if len(self.names) <= 12 else f"a name from the {self.name} catalog"
            raise InputError(field, value, f"{hint}allowed: {listed}", verb="unknown")
        return i

    def canonical(self, value, field: str = "name") -> str:
        return self.rows[self.resolve(value, field)]["name"]

    def row(self, value) -> dict:
        return self.rows[self.resolve(value, self.name)]

    def np_column(self, field: str):
        arr = self._np_cache.get(field)
        if arr is None:
            import numpy as np
            arr = np.asarray(self.col[field], dtype=float if field in self.numeric else object)
            self._np_cache[field] = arr
        return arr


# the suffixes of an instruction-tuned (chat) release's Hugging Face id: -Instruct, -chat(-hf), -it, -Instruct-2501, ...
CHAT_SUFFIXES = ("instruct", "chat", "it")
_VARIANT_SUFFIX = re.compile(r"[-_ .](instruct|chat|hf|it|base|pt|sft|dpo|v\d+(?:\.\d+)*|\d{4})$", re.I)


def base_model_candidates(text: str) -> list[str]:
    """The names a typed model name may mean, longest first: without the organisation, then without a weight-format
    suffix, then without each trailing fine-tune or version suffix in turn (each also without a leading "Meta-")."""
    name = str(text).strip().rsplit("/", 1)[-1]
    out = [name]
    name, _, suffix = split_weight_format(name)
    if suffix:
        out.append(name)
    while True:
        m = _VARIANT_SUFFIX.search(name)
        if not m or m.start() == 0:
            break
        name = name[:m.start()]
        out.append(name)
    return [n for x in out for n in ((x, x[5:]) if x.lower().startswith("meta-") else (x,))]


def base_model_name(text: str) -> tuple[str, list[str]]:
    """("Llama-3-70B", ["Instruct"]) for "meta-llama/Meta-Llama-3-70B-Instruct": the organisation,
    a leading "Meta-" and trailing fine-tune or version suffixes dropped, and the suffixes."""
    name = str(text).strip().rsplit("/", 1)[-1]
    removed: list[str] = []
    name, _, suffix = split_weight_format(name)  # "-FP8", "-NVFP4", "-AWQ": the weight format, not another model
    if suffix:
        removed.append(suffix)
    while True:
        m = _VARIANT_SUFFIX.search(name)
        if not m or m.start() == 0:
            break
        removed.insert(0, m.group(1))
        name = name[:m.start()]
    if name.lower().startswith("meta-"):
        name = name[5:]
    return name, removed


def _parse_file(path: Path, table: str, columns: list[str] | None) -> tuple[list[dict], list[str]]:
    rows: list[dict] = []
    try:
        raw = read_regular_file(path, MAX_CATALOG_BYTES)
    except OSError as err:
        raise CatalogError(path, None, None, f"cannot be read ({err.strerror or err})") from None
    if len(raw) > MAX_CATALOG_BYTES:
        raise CatalogError(path, None, None, f"is larger than {MAX_CATALOG_BYTES // 2**20} MB; a catalog holds rows of a few hundred bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise CatalogError(path, raw[:err.start].count(b"\n") + 1, None,
                           f"is not UTF-8 text (byte {err.start}); save the file as UTF-8 (CSV UTF-8 in Excel)") from None
    try:
        return _parse_text(path, text, table, columns, rows)
    except csv.Error as err:  # a field longer than the csv module allows, a quote never closed
        raise CatalogError(path, None, None, f"is not a readable CSV file ({err})") from None


MAX_CATALOG_BYTES = 50 * 2**20  # the largest shipped catalog is a few kB
# A refresh of every provider's every region and instance gives a few thousand rows; a file ten times the largest
# refresh anyone has seen is not a catalog, and would only make every command slow.
MAX_CATALOG_ROWS = 250_000


def _parse_text(path: Path, text: str, table: str, columns: list[str] | None, rows: list[dict]) -> tuple[list[dict], list[str]]:
    import io
    # the text checks run once over the whole file; a cell is looked at on its own only when the file holds a problem
    # (a catalog of 100,000 refreshed offers loads in about a second, not a minute)
    # (a CR LF line end, as Excel and Python's csv module write them, is a line end, not a character in a cell)
    checked = text.replace("\r\n", "\n") if "\r" in text else text
    clean = (ASCII_NOT_TEXT if checked.isascii() else NOT_TEXT).search(checked) is None
    del checked
    with io.StringIO(text, newline="") as fh:
        reader = csv.reader(fh)
        raw_header = next(reader, None) or []
        header = [h.strip() for h in raw_header]
        if "name" not in header:
            raise CatalogError(path, 1, "name", "the header has no 'name' column")
        if columns is not None:
            unknown = [h for h in header if h not in columns and h != "notes"]
            if unknown:
                raise CatalogError(path, 1, unknown[0], f"unknown column{did_you_mean(unknown[0], columns)}; allowed: {', '.join(columns)}")
        width = len(header)
        is_text = [k in TEXT_COLUMNS or k == "notes" for k in header]
        required = [columns is not None and k not in OPTIONAL_COLUMNS for k in header]
        records = [cells for cells in reader if cells]  # blank lines skipped, as csv.DictReader skips them
        if len(records) > MAX_CATALOG_ROWS:
            raise CatalogError(path, MAX_CATALOG_ROWS + 2, None, f"the file has more than {MAX_CATALOG_ROWS:,} rows, more than a "
                                                                 "catalog holds; keep the rows you use (or move the file away)")
        if clean and records and _parse_columns(header, records, is_text, required, rows):
            return rows, header  # every cell fine: read a column at a time
        reader = iter(records)  # a problem somewhere: cell by cell, to name its row and column
        lineno = 1
        for cells in reader:
            if not cells:
                continue  # a blank line, as csv.DictReader skips it
            lineno += 1
            if lineno > MAX_CATALOG_ROWS + 1:
                raise CatalogError(path, lineno, None, f"the file has more than {MAX_CATALOG_ROWS:,} rows, more than a catalog "
                                                       "holds; keep the rows you use (or move the file away)")
            if len(cells) > width:
                raise CatalogError(path, lineno, "?", "more values than columns")
            if len(cells) < width:
                cells = cells + [""] * (width - len(cells))
            row: dict = {}
            for key, value, text_column, needed in zip(header, cells, is_text, required):
                value = value.strip()
                if text_column:
                    if "\r" in value:
                        value = value.replace("\r\n", "\n")
                    problem = (None if clean else text_problem(value)) or (
                        as_of_problem(value) if key == "as_of" and value else None)
                    if problem:
                        raise CatalogError(path, lineno, key, problem)
                    row[key] = value
                    continue
                if value == "":
                    if needed:
                        # user rows must be complete: a silent 0 would hide a typo
                        raise CatalogError(path, lineno, key, "is empty; a number is required")
                    row[key] = 0.0
                    continue
                try:
                    number = float(value)
                except ValueError:
                    raise CatalogError(path, lineno, key, f"{value!r} is not a number") from None
                if not 0 <= number < math.inf:  # NaN fails too
                    raise CatalogError(path, lineno, key, f"{value!r} must be a finite number >= 0")
                row[key] = number
            if not row.get("name"):
                raise CatalogError(path, lineno, "name", "is empty")
            rows.append(row)
    return rows, header


def _parse_columns(header, records, is_text, required, rows) -> bool:
    """Rows from CSV records a column at a time (float() mapped over a column runs in C: 100,000 offers in a fraction
    of a second); False, with ``rows`` untouched, at the first cell that needs a message (the cell-by-cell reader then
    names it).  Every check runs in C over a whole column (a join, a set, a map)."""
    import numpy as np
    width = len(header)
    if set(map(len, records)) != {width}:
        return False
    columns = []
    for key, text_column, needed, raw in zip(header, is_text, required, zip(*records)):  # zip(*records): columns, in C
        cells = list(map(str.strip, raw))
        if text_column:
            if "\r" in "\n".join(cells):
                cells = [c.replace("\r\n", "\n") for c in cells]
            if key == "as_of" and any(as_of_problem(c) for c in set(cells) if c):
                return False
            if key == "name" and not all(cells):
                return False
            columns.append(cells)
            continue
        if not all(cells):
            if needed:
                return False
            cells = [c or "0" for c in cells]
        try:
            numbers = list(map(float, cells))
        except ValueError:
            return False
        array = np.array(numbers)
        if not ((array >= 0) & (array < math.inf)).all():  # NaN fails too
            return False
        columns.append(numbers)
    rows.extend(map(dict, map(zip, repeat(header), zip(*columns))))  # a dict per row, built in C
    return True


# Every numeric field of the big catalogs is checked like an input when a file loads.
RULES = {
    "gpus": {"memory_gib": "pos", "memory_bandwidth_gbps": "pos", "bf16_dense_tflops": "pos", "fp8_dense_tflops": "nonneg", "fp4_dense_tflops": "nonneg",
             "tf32_dense_tflops": "pos", "tdp_w": "pos", "nvlink_gbps": "nonneg", "multi_gpu_fabric": "flag", "consumer": "flag",
             "purchase_usd": "nonneg", "default_mfu": "frac_pos", "server_gpus": "whole",
             "decode_efficiency_factor": "nonneg", "prefill_efficiency_factor": "nonneg", "card_share": "frac",
             "fp16_accumulate_dense_tflops": "nonneg", "system_w_per_slot": "nonneg"},
    "models": {"layers": "count", "hidden": "count", "ffn": "count", "heads": "count", "vocab": "count", "kv_heads": "count",
               "head_dim": "pos", "tied_embeddings": "flag", "gated_mlp": "flag", "experts": "count", "active_experts": "count",
               "qkv_bias": "flag", "norms_per_layer": "nonneg", "dropout": "flag", "other_params": "nonneg", "max_context": "count",
               "sliding_window": "nonneg", "sliding_layer_fraction": "frac", "params_published_b": "nonneg", "is_estimate": "flag",
               "shared_experts": "nonneg", "dense_layers": "nonneg", "dense_ffn": "nonneg", "q_lora_rank": "nonneg",
               "kv_lora_rank": "nonneg", "qk_rope_dim": "nonneg", "v_head_dim": "nonneg", "encoder_params": "nonneg",
               "attention_layers": "whole", "state_layers": "whole", "state_layer_params": "nonneg", "state_elements_per_layer": "nonneg", "state_conv_elements_per_layer": "nonneg", "state_bits": "nonneg", "sparse_attention_tokens": "whole", "indexer_heads": "whole", "indexer_head_dim": "whole", "global_kv_heads": "whole", "global_head_dim": "nonneg", "attention_layer_params": "nonneg", "moe_latent_dim": "whole",
               "compressed_kv_layers": "nonneg", "indexer_kv_layers": "nonneg"},
    "precisions": {"fp8_linears": "flag", "block_scaled": "flag", "fp8_weight_copy_bytes": "nonneg", "linear_input_bytes": "nonneg",
                   "fp8_mfu_factor": "nonneg"},
    "optimizers": {"step_passes": "pos", "step_ps_per_param": "nonneg"},
    "frameworks": {"fp32_optimizer_states": "flag", "fp32_master": "flag", "fp32_grads": "flag", "qlora_fp32_casts": "flag", "chunked_loss": "flag",
                   "activation_factor": "pos", "speed_factor": "frac_pos", "qlora_dequant_ps_per_weight": "nonneg", "qlora_dequant_us_per_matrix": "nonneg", "lora_ops_per_adapter": "whole",
                   "lora_op_overhead_us": "nonneg", "lora_bytes_per_dim": "nonneg", "lora_fp32_adapter_inputs": "flag", "activation_traffic_share": "frac", "eager_bytes_per_dim": "nonneg", "layer_overhead_us": "nonneg", "step_flat_grad_bytes": "nonneg", "offload_streams_gradients": "flag", "zero3_layer_overhead_us": "nonneg", "zero3_recompute_overhead_us": "nonneg", "refuses_unrun_layouts": "flag", "grads_freed_between_steps": "flag", "pipeline_schedule": "flag", "expert_parallel_training": "flag", "speed_band_pct": "nonneg", "memory_band_pct": "nonneg"},
    "apis": {"usd_per_mtok_input": "nonneg", "usd_per_mtok_output": "pos"},
    "engines": {"memory_share_of": "nonneg", "fp16_accumulate": "flag", "disaggregated_mode": "flag", "static_batching": "flag", "prefill_half_tokens": "nonneg"},
    "offers": {"gpus_per_instance": "count", "interruptible": "flag", "commitment_months": "months", "usd_per_instance_hour": "nonneg",
               "usd_per_gpu_hour": "nonneg", "billing_increment_s": "billing", "commission_pct": "pct", "usd_per_gb_month_storage": "nonneg",
               "usd_per_gb_egress": "nonneg", "gpus_per_node": "whole", "fabric_gbps_per_gpu": "nonneg", "max_gpus_per_job": "whole",
               "min_billed_hours": "nonneg"},
}
# No catalog number is anywhere near 1e15 (the largest: a vision encoder of 8.7e8 parameters); above it,
# products in the formulas (a price times a count, TFLOPS times 1e12) could overflow to infinity.
CATALOG_MAX = 1e15
# Nor is any non-zero catalog number below 1e-6 (the smallest: $0.004 per GB of egress); a tiny positive
# price or speed would be divided by in break-even and per-token figures, which then overflow to infinity.
CATALOG_MIN = 1e-6
RULE_TEXT = {"pos": "a number from 0.000001 to 1e15", "nonneg": "0 or a number from 0.000001 to 1e15", "flag": "0 or 1",
             "count": "a whole number >= 1 and <= 1e15", "whole": "a whole number >= 0 and <= 1e15",
             "frac": "a number from 0 to 1", "frac_pos": "a number from 0.01 to 1", "pct": "a number from 0 to 100",
             "billing": "a whole number of seconds from 1 to 2,678,400 (31 days)",
             "months": "0 (no commitment) to 120 months (the longest reserved terms clouds sell are 3 to 5 years)"}
RULE_OK = {"pos": lambda x: CATALOG_MIN <= x <= CATALOG_MAX, "nonneg": lambda x: x == 0 or CATALOG_MIN <= x <= CATALOG_MAX,
           "flag": lambda x: x in (0, 1), "count": lambda x: 1 <= x <= CATALOG_MAX and x == int(x),
           "whole": lambda x: 0 <= x <= CATALOG_MAX and x == int(x),
           "frac": lambda x: 0 <= x <= 1, "frac_pos": lambda x: 0.01 <= x <= 1,  # an efficiency: at least the least mfu an input may give
           "pct": lambda x: 0 <= x <= 100, "billing": lambda x: 1 <= x <= 2_678_400 and x == int(x),
           "months": lambda x: 0 <= x <= 120}
DEFAULT_SERVER_SIZES = (1, 2, 4, 8)  # a GPU row without server_sizes: PCIe cards, servers of 1 to 8


def server_sizes(row: Mapping) -> tuple[int, ...]:
    """A GPU row's server_sizes ("4;8": the GPU counts one server holds as sold) as whole numbers; empty or 0 means
    not given (DEFAULT_SERVER_SIZES).  ValueError for anything but counts from 1 to 1,024 separated by ";"."""
    text = str(row.get("server_sizes", "") or "").strip()
    if text in ("", "0"):
        return DEFAULT_SERVER_SIZES
    parts = [x.strip() for x in text.split(";")]
    if not all(x.isdigit() and 1 <= int(x) <= 1024 for x in parts):
        raise ValueError(text)
    return tuple(sorted({int(x) for x in parts}))


MIG_NAME = re.compile(r"(?P<card>.+) MIG (?P<profile>\d+g\.\d+gb)")


def mig_profile(row: Mapping) -> tuple[str, str] | None:
    """(card, profile) for a GPU row that is a MIG slice ("H100-SXM MIG 1g.10gb": ("H100-SXM", "1g.10gb")), else None.
    A slice is a GPU of its own for serving: one slice per job (no NVLink, no peer-to-peer between instances), so the
    training planner leaves slices out."""
    if not str(row.get("form_factor", "")).startswith("MIG"):
        return None
    m = MIG_NAME.fullmatch(str(row.get("name", "")))
    return (m.group("card"), m.group("profile")) if m else None


RESERVED_OFFERS = ("auto", "none")  # "auto" picks the GPU's cheapest offer; "none" is the no-offer placeholder


def _check_ranges(table: str, rows: list[dict], path, first_line: int = 2) -> None:
    """Every row's numbers against the catalog's declared ranges, a column at a time (100,000 refreshed offers in a
    fraction of a second); the first row holding a bad number is reported as ``_check_row`` words it."""
    from operator import itemgetter
    worst = len(rows)
    for column, rule in RULES.get(table, {}).items():
        ok = RULE_OK[rule]
        try:
            values = set(map(itemgetter(column), rows))  # a refreshed catalog repeats few distinct numbers: each checked once
        except KeyError:  # a row without the column
            values = {r[column] for r in rows if column in r}
        wrong = {v for v in values if not ok(float(v))}
        if not wrong:
            continue
        bad = next((i for i, r in enumerate(rows[:worst]) if column in r and r[column] in wrong), None)
        if bad is not None:
            worst = bad
    if worst < len(rows):
        _check_row(table, rows[worst], path, first_line + worst)


PIPELINE_SHARDINGS = ("", "none", "zero1", "zero2", "zero3")  # frameworks.csv pipeline_max_sharding: shardings.csv names


def _check_row(table: str, row: dict, path, line: int, ranges: bool = True) -> None:
    """A row's numbers against the catalog's declared ranges (unless ``ranges`` is False: checked already, see
    ``_check_ranges``) and its cross-field rules."""
    where = f"{row.get('name', '')}".strip()
    for column, rule in RULES.get(table, {}).items() if ranges else ():
        if column in row and not RULE_OK[rule](float(row[column])):
            raise CatalogError(path, line, column, f"{row[column]:g} is not allowed for {where}; allowed: {RULE_TEXT[rule]}")
    if table == "gpus":
        try:
            server_sizes(row)
        except ValueError:
            raise CatalogError(path, line, "server_sizes", f"{show(row['server_sizes'])} is not allowed for {where}; allowed: "
                                                           'GPU counts per server from 1 to 1,024 separated by ";", e.g. "4;8"') from None
    if table == "frameworks" and str(row.get("pipeline_max_sharding", "")) not in PIPELINE_SHARDINGS:
        raise CatalogError(path, line, "pipeline_max_sharding", f"{show(row['pipeline_max_sharding'])} is not allowed for "
                                                                f"{where}; allowed: empty (any), none, zero1, zero2, zero3")
    if table == "gpus" and str(row.get("form_factor", "")).startswith("MIG"):
        # a MIG slice runs a job on its own: no fabric, servers of one
        if MIG_NAME.fullmatch(str(row.get("name", ""))) is None:
            raise CatalogError(path, line, "name", f"{show(where)} is a MIG slice (form_factor MIG ...); name it "
                                                   '"<card> MIG <profile>", e.g. "H100-SXM MIG 1g.10gb"')
        for column, allowed in (("multi_gpu_fabric", 0), ("nvlink_gbps", 0)):
            if float(row.get(column, 0) or 0) != allowed:
                raise CatalogError(path, line, column, f"{row[column]:g} is not allowed for the MIG slice {where}; allowed: 0 "
                                                       "(a MIG instance has no NVLink or peer-to-peer access)")
        if str(row.get("server_sizes", "")).strip() != "1":
            raise CatalogError(path, line, "server_sizes", f"{show(row.get('server_sizes', ''))} is not allowed for the MIG slice "
                                                           f"{where}; allowed: 1 (one slice per job)")
    if table == "offers":
        per_instance, per_gpu = float(row.get("usd_per_instance_hour", 0) or 0), float(row.get("usd_per_gpu_hour", 0) or 0)
        gpus = float(row.get("gpus_per_instance", 1) or 1)
        # both prices given must agree (a cent of rounding per instance-hour, or 1 %): the planner prices by the GPU-hour
        if per_instance > 0 and per_gpu > 0 and abs(per_instance - per_gpu * gpus) > max(0.011, 0.01 * per_instance):
            raise CatalogError(path, line, "usd_per_instance_hour", f"{per_instance:g} is not gpus_per_instance x usd_per_gpu_hour "
                                                                   f"({gpus:g} x {per_gpu:g} = {gpus * per_gpu:g}) for {where}; "
                                                                   "allowed: the two agree within 1 %, or usd_per_instance_hour 0 (not given)")
    if table == "models":
        for small, big in (("kv_heads", "heads"), ("active_experts", "experts"), ("dense_layers", "layers"),
                           ("qk_rope_dim", "head_dim"), ("attention_layers", "layers")):
            if small in row and big in row and row[small] > row[big]:
                raise CatalogError(path, line, small, f"{row[small]:g} is more than {big} ({row[big]:g}) for {where}")


def _first_price_mismatch(rows: list[dict]) -> int:
    """Index of the first offer row whose two prices disagree as ``_check_row`` words it (len(rows) when none does),
    a column at a time."""
    from operator import itemgetter

    import numpy as np
    if not rows:
        return 0

    def column(key, default):  # float(row.get(key, default) or default) for every row
        try:
            values = np.array(list(map(itemgetter(key), rows)), dtype=float)
        except (KeyError, TypeError, ValueError):
            return np.array([float(r.get(key, default) or default) for r in rows])
        return np.where(values == 0, default, values)
    per_instance, per_gpu, gpus = column("usd_per_instance_hour", 0), column("usd_per_gpu_hour", 0), column("gpus_per_instance", 1)
    bad = (per_instance > 0) & (per_gpu > 0) & (np.abs(per_instance - per_gpu * gpus) > np.maximum(0.011, 0.01 * per_instance))
    return int(np.argmax(bad)) if bad.any() else len(rows)


def load_table(name: str, user_dir: Path | None = None, user_file: Path | None = None) -> Table:
    """The built-in catalog ``name`` with the user's rows (``<user_dir>/<name>.csv``, or ``user_file``); CatalogError."""
    builtin = DATA_DIR / f"{name}.csv"
    rows, columns = _parse_file(builtin, name, None)
    for line, r in enumerate(rows, start=2):
        if r["name"] != "none":
            _check_row(name, r, builtin, line)
    files = [str(builtin)]
    if user_file is None:
        user_dir = user_config_dir() if user_dir is None else user_dir
        user_file = user_dir / f"{name}.csv"
    table = Table(name, rows, columns, files)
    if _user_file_exists(user_file):
        user_rows, user_header = _parse_file(user_file, name, columns)
        _check_ranges(name, user_rows, user_file)
        missing = [c for c in columns if c not in user_header and c not in OPTIONAL_COLUMNS and c != "aliases"]
        first_line: dict[str, int] = {}
        defaults = {c: 0 if c in table.numeric else "" for c in columns}
        new_rows: list[dict] = []
        new_keys: list[str] = []
        new_lines: list[int] = []
        # rows whose columns are the catalog's, in its order, are taken as they are (a copy per row costs a second
        # on 100,000 refreshed offers); the offers' price check runs a column at a time, its first failure on its line
        as_is = user_header[:len(columns)] == columns
        price_line = _first_price_mismatch(user_rows) + 2 if name == "offers" else None
        index = table._index
        for line, (r, key) in enumerate(zip(user_rows, normalized([r["name"] for r in user_rows])), start=2):
            builtin_row = table._index.get(key)
            if builtin_row is not None and builtin_row < table.file_rows:
                # a row named like a built-in one changes what it gives (a price, say) and keeps the rest
                base_row = table.rows[builtin_row]
                r.update({c: base_row[c] for c in columns if c not in r and c != "source"})
            elif missing:
                raise CatalogError(user_file, line, missing[0], "column missing")
            if key in first_line:
                raise CatalogError(user_file, line, "name", f'"{r["name"]}" is also the name in row {first_line[key]}; '
                                                            "give each row its own name")
            first_line[key] = line
            if name == "offers" and key in RESERVED_OFFERS:
                raise CatalogError(user_file, line, "name", f'"{r["name"]}" is reserved ({", ".join(RESERVED_OFFERS)}); '
                                                            "choose another name")
            if name != "offers" or line == price_line or builtin_row is not None:  # an override took columns from the built-in row
                _check_row(name, r, user_file, line, ranges=False)
            # a row named like a built-in row overrides it (and is listed as such); an alias may not take another row's name
            own = index.get(key)
            own = own if own is not None and own < table.file_rows else None
            aliases = r.get("aliases")
            for alias in filter(None, (a.strip() for a in str(aliases).split(";"))) if aliases else ():
                other = table._index.get(normalize(alias))
                if other is not None and other < table.file_rows and other != own:
                    raise CatalogError(user_file, line, "aliases", f'"{alias}" already names {table.rows[other]["name"]}; '
                                                                   "an alias may not point at another row")
            if own is not None:
                table.overrides[table.rows[own]["name"]] = (r["name"], user_file.name)
                r["name"] = table.rows[own]["name"]
            if not r.get("source"):
                r["source"] = f"user catalog file {user_file.name}"  # never the full path: it holds the user's name
            if own is not None:
                table.origin[table._append({**defaults, **r})] = (str(user_file), line)
            else:  # a new row: appended with the others in one pass below
                new_rows.append(r if as_is else {**defaults, **r})
                new_keys.append(key)
                new_lines.append(line)
        first = table._extend(new_rows, new_keys)
        table.origin.update(zip(range(first, first + len(new_rows)), zip(repeat(str(user_file)), new_lines)))
        table.files.append(str(user_file))
        table.user_rows = len(user_rows)
        table.file_rows = len(table.rows)  # the user's rows are file rows too (GPU_LIST lists them)
    return table


def _user_file_exists(path: Path) -> bool:
    """Whether the user has a catalog file here; CatalogError for a path that cannot be used (a name
    too long for the file system, a folder that cannot be read)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as err:
        raise CatalogError(path, None, None, f"the catalog folder cannot be used ({err.strerror or err}); "
                                             "check GPU_TCO_CONFIG_DIR or the configuration folder") from None
    return True  # what it is (a file, a folder, a pipe) is checked when it is read


TABLE_NAMES = (
    "gpus", "models", "precisions", "methods", "optimizers", "shardings",
    "recomputes", "lora_targets", "weight_dtypes", "kv_dtypes", "depreciations", "offers", "apis",
    "tasks", "frameworks", "master_weights", "state_dtypes", "qlora_casts", "adapter_dtypes", "engines",
)

class Snapshot:
    """The loaded catalogs as one value: the tables, their version and what is derived from them.

    ``snapshot()`` returns the current one; ``reload()`` replaces it as a whole, and so does a row added to
    one of its tables (``Table.add``).  Nothing here changes after it is published: a value derived from
    the tables (the offer maps, the engine's defaults and row tuples) is built on first use and kept in the
    snapshot it was built from, so a cache can never outlive the catalogs it describes.  This module's
    reference to the current snapshot is the one piece of module state that changes at run time.
    """

    __slots__ = ("tables", "version", "memo")

    def __init__(self, tables: Mapping[str, Table], version: int):
        object.__setattr__(self, "tables", MappingProxyType(dict(tables)))
        object.__setattr__(self, "version", version)
        # values derived from these tables, by key, each built on first use (``derived``); a hot path
        # may read it directly (one dictionary lookup), never store anything but what ``derived`` would
        object.__setattr__(self, "memo", {})

    def __setattr__(self, name, value):
        raise AttributeError(f"a catalog snapshot cannot change ({name}); publish a new one")

    def derived(self, key, build):
        """The value ``build()`` returns for these tables, built once per snapshot and key."""
        try:
            return self.memo[key]
        except KeyError:
            return self.memo.setdefault(key, build())

    def offer_maps(self):
        """(gpu row of each offer, reference offer of each GPU) as NumPy arrays; see ``offer_maps``."""
        try:
            return self.memo["offer maps"]
        except KeyError:
            return self.memo.setdefault("offer maps", _build_offer_maps(self.tables))

    def offer_map_lists(self):
        """``offer_maps()`` as Python lists."""
        try:
            return self.memo["offer map lists"]
        except KeyError:
            return self.memo.setdefault("offer map lists", tuple(m.tolist() for m in self.offer_maps()))


_SNAPSHOT: Snapshot | None = None  # the current snapshot: the only module state that changes after import


def snapshot() -> Snapshot:
    """The current catalogs, loaded from the files on first use."""
    current = _SNAPSHOT
    return current if current is not None else _publish(None)


def content_digest() -> str:
    """A hash of every catalog as loaded, the user's own files and refreshed offers included (about 25 ms for the
    shipped catalogs; kept per snapshot): the key of results computed from the catalogs that are kept beyond this
    process (``codecache.kept``: the calibration's refits), which the code cache's fingerprint alone does not cover
    (it hashes the shipped files only)."""
    memo = snapshot().memo
    digest = memo.get("content digest")
    if digest is None:
        import hashlib
        h = hashlib.sha256()
        for name, table in sorted(tables().items()):
            h.update(repr((name, table.columns, table.rows)).encode())
        digest = memo.setdefault("content digest", h.hexdigest())
    return digest


def tables() -> Mapping[str, Table]:
    current = _SNAPSHOT  # snapshot(), inlined: every evaluation asks
    return (current if current is not None else _publish(None)).tables


def _publish(previous: Snapshot | None) -> Snapshot:
    """Read every catalog and make it the current snapshot (version one past ``previous``)."""
    global _SNAPSHOT
    loaded = _load_all()
    _SNAPSHOT = Snapshot(loaded, (previous.version if previous is not None else 0) + 1)
    return _SNAPSHOT


def _table_changed(table: Table) -> None:
    """A table gained a row: if it belongs to the current snapshot, publish a new one around the same tables."""
    global _SNAPSHOT
    current = _SNAPSHOT
    if current is not None and any(t is table for t in current.tables.values()):
        _SNAPSHOT = Snapshot(current.tables, current.version + 1)


AUTO_OFFER = "auto"  # the offer input's default: the GPU's reference offer (see reference_offer_rows)


def _check_offers(tabs: dict) -> None:
    """Every offer names a catalog GPU (canonicalised) and bills in whole seconds >= 1."""
    offers, gpus_ = tabs["offers"], tabs["gpus"]
    gpu_row = {g: gpus_.find(g) if g else None for g in set(offers.col["gpu"])}  # each GPU name matched once
    for i, row in enumerate(offers.rows):
        if row["name"] == "none":
            continue
        j = gpu_row[row["gpu"]]
        if j is None:
            where, line = offers.origin.get(i, (offers.files[0], i + 2))
            raise CatalogError(where, line, "gpu", f"unknown GPU {row['gpu']!r}{did_you_mean(row['gpu'], gpus_.names)}; it must name a row of gpus.csv")
        offers.col["gpu"][i] = row["gpu"] = gpus_.rows[j]["name"]
        if row["billing_increment_s"] < 1 or row["gpus_per_instance"] < 1:
            where, line = offers.origin.get(i, (offers.files[0], i + 2))
            raise CatalogError(where, line, "billing_increment_s" if row["billing_increment_s"] < 1 else "gpus_per_instance",
                               "must be >= 1")


def _check_apis(tabs: dict) -> None:
    """Every API row's catalog_model (the open model it serves, if any) names a row of models.csv (canonicalised)."""
    apis, models_ = tabs["apis"], tabs["models"]
    for i, row in enumerate(apis.rows):
        if not row.get("catalog_model"):
            continue
        j = models_.find(row["catalog_model"])
        if j is None:
            where, line = apis.origin.get(i, (apis.files[0], i + 2))
            hint = did_you_mean(str(row["catalog_model"]), models_.names)
            raise CatalogError(where, line, "catalog_model", f"unknown model {row['catalog_model']!r}{hint}; "
                                                              "it must name a row of models.csv or be empty")
        apis.col["catalog_model"][i] = row["catalog_model"] = models_.rows[j]["name"]


def _check_release_formats(tabs: dict) -> None:
    """Every model's release_weights_dtype is empty or a row of weight_dtypes.csv (canonicalised)."""
    models_, formats = tabs["models"], tabs["weight_dtypes"]
    for i, row in enumerate(models_.rows):
        value = row.get("release_weights_dtype")
        if not value:
            continue
        j = formats.find(value)
        if j is None:
            where, line = models_.origin.get(i, (models_.files[0], i + 2))
            raise CatalogError(where, line, "release_weights_dtype",
                               f"unknown weight format {show(value)}{did_you_mean(str(value), formats.names)}; allowed: "
                               f"{', '.join(formats.names)}, or empty (a 16-bit release)")
        models_.col["release_weights_dtype"][i] = row["release_weights_dtype"] = formats.rows[j]["name"]


def _check_mig(tabs: dict) -> None:
    """Every MIG slice is carved from a GPU of the catalog (the card its name starts with)."""
    gpus_ = tabs["gpus"]
    for i, row in enumerate(gpus_.rows):
        mig = mig_profile(row)
        if mig and (gpus_.find(mig[0]) is None or mig_profile(gpus_.rows[gpus_.find(mig[0])])):
            where, line = gpus_.origin.get(i, (gpus_.files[0], i + 2))
            hint = did_you_mean(mig[0], [n for n, r in zip(gpus_.names, gpus_.rows) if not mig_profile(r)])
            raise CatalogError(where, line, "name", f"{show(row['name'])}: the card {show(mig[0])} is not a whole GPU of the "
                                                    f"catalog{hint}; a MIG slice is named \"<card> MIG <profile>\"")


def apis() -> Table:
    return tables()["apis"]


def offer_maps():
    """(offer_gpu_rows(), reference_offer_rows()) in one call."""
    return snapshot().offer_maps()


def offer_gpu_rows():
    """For each offer row, the row of its GPU in the gpus catalog (-1 for the 'none' placeholder)."""
    return snapshot().offer_maps()[0]


def reference_offer_rows():
    """For each GPU row, the offer "auto" picks: the cheapest on-demand, uncommitted,
    uninterruptible offer per GPU-hour (the 'none' row if the GPU has no such offer)."""
    return snapshot().offer_maps()[1]


def offer_max_gpus(row: Mapping) -> float:
    """The largest job an offer sells, as the formula offer_max_gpus reads it: max_gpus_per_job, else no limit when it
    names a network between machines, else one machine (gpus_per_node, or the instance)."""
    if row["max_gpus_per_job"] > 0:
        return float(row["max_gpus_per_job"])
    if row["fabric_gbps_per_gpu"] > 0:
        return float("inf")
    return float(row["gpus_per_node"] if row["gpus_per_node"] > 0 else row["gpus_per_instance"])


def sized_reference_offers():
    """For each GPU row, the offers "auto" may pick as (largest job sold, offer row), cheapest first: on-demand,
    uncommitted, uninterruptible, priced.  ``auto_offer_row`` reads it."""
    return snapshot().derived("sized reference offers", lambda: _build_sized_offers(tables()))


def _offer_gpu_row_list(tabs: Mapping[str, Table]) -> list:
    """The GPU row of each offer (None for none), each GPU name matched once."""
    gpus_ = tabs["gpus"]
    column = tabs["offers"].col["gpu"]
    row_of_gpu = {g: gpus_.find(g) if g and g != "-" else None for g in set(column)}
    return list(map(row_of_gpu.__getitem__, column))


def _build_sized_offers(tabs: Mapping[str, Table]) -> dict:
    offers = tabs["offers"]
    out: dict[int, list] = {}
    for i, (row, g) in enumerate(zip(offers.rows, _offer_gpu_row_list(tabs))):
        on_demand = str(row["price_type"]).startswith("on-demand") and "historical" not in str(row["price_type"])
        if g is not None and on_demand and not row["interruptible"] and not row["commitment_months"] and row["usd_per_gpu_hour"] > 0:
            out.setdefault(g, []).append((row["usd_per_gpu_hour"], i, offer_max_gpus(row)))
    return {g: [(most, i) for _, i, most in sorted(v, key=lambda t: (t[0], t[1]))] for g, v in out.items()}


def auto_offer_row(gpu_row: int, n_gpus: float, reference: int) -> int:
    """The offer "auto" picks for ``n_gpus`` of one GPU: its cheapest on-demand offer that sells that many GPUs as
    one job, so a job across machines runs on a network an offer sells; ``reference`` (the cheapest on-demand offer)
    when none does (the job is then not sold, option_offer_sells)."""
    for most, i in sized_reference_offers().get(gpu_row, ()):
        if most >= n_gpus:
            return i
    return reference


AUTO_OFFER_STEPS = 4  # the workbook's GPUs sheet holds this many size steps of "auto" per GPU


def auto_offer_steps(gpu_row: int) -> tuple[list[tuple[int, int]], float]:
    """The offers "auto" picks for one GPU as the job grows: [(from this many GPUs, offer row), ...] in increasing
    size (the first from 1 GPU), and the largest job any of them sells.  ``auto_offer_row(g, n)`` is the last step
    whose start is at most n, or the first step when no offer sells n GPUs (what the workbook computes in Excel)."""
    steps, most = [], 0.0
    for sold, i in sized_reference_offers().get(gpu_row, ()):
        if sold > most:
            steps.append((int(most) + 1, i))
            most = sold
    return steps, most


def _build_offer_maps(tabs: Mapping[str, Table]):
    import numpy as np
    offers, gpus_ = tabs["offers"], tabs["gpus"]
    gpu_rows = [-1 if g is None else g for g in _offer_gpu_row_list(tabs)]
    none = offers.names.index("none")
    ref = [none] * len(gpus_.rows)  # Python lists in the loop: a NumPy element read costs ten times more
    best = [math.inf] * len(gpus_.rows)
    for i, (g, row) in enumerate(zip(gpu_rows, offers.rows)):
        on_demand = str(row["price_type"]).startswith("on-demand") and "historical" not in str(row["price_type"])
        if g >= 0 and on_demand and not row["interruptible"] and not row["commitment_months"] \
                and 0 < row["usd_per_gpu_hour"] < best[g]:
            best[g] = row["usd_per_gpu_hour"]
            ref[g] = i
    gpu_row, ref = np.array(gpu_rows, dtype=np.intp), np.array(ref, dtype=np.intp)
    return gpu_row, ref


def offer_map_lists():
    """``offer_maps()`` as Python lists: a scalar call indexes them faster than NumPy arrays."""
    return snapshot().offer_map_lists()


def offers() -> Table:
    return tables()["offers"]


def reload() -> Mapping[str, Table]:
    """Re-read all catalogs (after the user edited their files) into a new snapshot, also when the files
    are unchanged: everything derived is rebuilt from the files read now.  A load that fails leaves no
    snapshot, so the next use reads the files again and reports the same error."""
    global _SNAPSHOT
    previous, _SNAPSHOT = _SNAPSHOT, None
    return _publish(previous).tables


def install_user_file(path: Path, data: bytes, check=None) -> None:
    """Install a user catalog file: the candidate is written beside the old file (a temporary of gpu-tco's own name,
    see files.TEMP_MARK), checked, and only then renamed over it, so a refused or interrupted install (a CatalogError,
    Ctrl-C or any other signal during the check, a full disk) never touches the old file.  A file the catalogs read
    (``<table>.csv`` in ``user_config_dir()``) is checked as the catalogs read it, with every other table (an offer's
    GPU must be a catalog GPU), and the checked tables become the current snapshot; ``check(path)`` checks a file
    elsewhere (one the catalogs do not read).  Raises OSError when the file cannot be written (a read-only file is
    never replaced), GpuTcoError when it is refused (naming ``path``, not the candidate)."""
    import secrets

    from .files import TEMP_MARK, target_problem, write_atomically
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and target_problem(path) is not None:
        raise PermissionError(13, target_problem(path), str(path))
    table = path.stem if path.stem in TABLE_NAMES and path.suffix == ".csv" and check is None else None
    read_by_catalogs = table is not None and _same_folder(path.parent, user_config_dir())
    candidate = path.parent / f".{path.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        write_atomically(candidate, data)
        try:
            if check is not None:
                check(candidate)
            loaded = _load_all({table: candidate}) if table else None
        except CatalogError as err:
            if err.path != str(candidate):
                raise
            raise CatalogError(path, err.row, err.column, err.problem) from None
        os.replace(candidate, path)  # the one step that changes the user's file: the old one or the whole new one
    finally:
        candidate.unlink(missing_ok=True)
    global _SNAPSHOT
    if not read_by_catalogs:
        reload()  # every front end reads the new rows from here on
    else:
        loaded[table].files[-1] = str(path)
        previous = _SNAPSHOT
        _SNAPSHOT = Snapshot(loaded, (previous.version if previous is not None else 0) + 1)


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def _load_all(user_files: dict | None = None) -> dict:
    """Every catalog, read with the user's files (``user_files``: table -> a file read instead of the user's own), and
    checked across tables; raises CatalogError."""
    from .collector import collector_paused
    user_files = user_files or {}
    with collector_paused():  # reading makes no reference cycles: passes over 100,000 fresh rows would only cost time
        loaded = {n: load_table(n, user_file=user_files.get(n)) for n in TABLE_NAMES}
    _check_offers(loaded)
    _check_apis(loaded)
    _check_release_formats(loaded)
    _check_mig(loaded)
    return loaded


def gpus() -> Table:
    return tables()["gpus"]


def models() -> Table:
    return tables()["models"]
