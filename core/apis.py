"""API prices per million tokens: the ``apis`` catalog and its update from the genai-prices data.

``data/apis.csv`` holds one row per API offer a self-hosted setup is compared with: the provider, the model,
the price per million input (prompt) tokens and per million output (generated) tokens in USD, the price
page, and the date the prices were read.  The prices come from a dated snapshot of genai-prices (Pydantic,
"genai-prices: calculate prices for calling LLM inference APIs", MIT, https://github.com/pydantic/genai-prices),
which tracks the providers' price pages; each row keeps the provider's price page as its source.

``price_key`` ("provider id:model id" in genai-prices) links a row to the genai-prices data, so an update
(``gpu-tco apis --update FILE`` with genai-prices' ``data.json``, or ``--refresh`` from the installed
genai-prices package) replaces the prices of the rows it finds and keeps the others as they are.  A model
priced in tiers by prompt length (e.g. above 272,000 tokens) carries its base tier: the price of the
prompts a serving comparison is about.  Prices that start on a later date than ``as_of`` are not used yet.
Off-peak (time-of-day) discounts and batch prices are not used: the catalog holds the standard price.
"""
from __future__ import annotations

import csv
import datetime
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from . import catalog, json_numbers
from .errors import GpuTcoError
from .files import read_regular_file
from .names import normalize

COLUMNS = ["name", "aliases", "provider", "model", "catalog_model", "price_key", "usd_per_mtok_input",
           "usd_per_mtok_output", "source", "as_of"]
GENAI_PRICES = "genai-prices (Pydantic, https://github.com/pydantic/genai-prices)"
DATA_JSON_URL = "https://raw.githubusercontent.com/pydantic/genai-prices/refs/heads/main/prices/new_data/v2/data.json"
MAX_JSON_BYTES = 200 * 2**20  # the whole genai-prices data is a few MB


class UpdateError(GpuTcoError):
    """The update could not run (unreadable file, not genai-prices data, no package); one line."""


@dataclass
class UpdateResult:
    path: Path
    as_of: str
    updated: list[str] = field(default_factory=list)   # row names whose prices were read from the data
    changed: list[str] = field(default_factory=list)   # of those, the rows whose prices differ from before
    missing: list[str] = field(default_factory=list)   # rows the data does not price: kept as they were

    def summary(self) -> str:
        text = (f"Wrote {self.path}: {len(self.updated)} API prices read from the genai-prices data as of {self.as_of} "
                f"({len(self.changed)} changed)")
        if self.missing:
            text += f"; {len(self.missing)} not in the data, kept as they were: {', '.join(self.missing)}"
        return text + "."


def _get(obj, key: str):
    """A field of the genai-prices data, read alike from its JSON (dicts) and from the package (objects)."""
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


MAX_USD_PER_MTOK = 100_000.0  # the dearest API lists a few hundred dollars per million tokens; above this is no price


def _number(value, key: str = "", field: str = "") -> float | None:
    """A price from genai-prices: a number, or tiered prices ({"base": ..., "tiers": [...]}: the base tier); None when
    not given.  A boolean, text, a negative, infinite or absurd number is refused (UpdateError naming the model's
    key, the field and the value), never read as $0 or $1."""
    if value is None:
        return None
    base = _get(value, "base")
    if base is not None and not isinstance(value, (int, float, str)):
        value = base
    ok = not isinstance(value, (bool, str)) and not json_numbers.is_unusable(value)
    try:
        number = float(value) if ok else math.nan
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not (0 <= number <= MAX_USD_PER_MTOK):  # NaN fails too
        raise UpdateError(f"apis --update: {key}, {field}: {_shown(value)} is not a price; allowed: a number from 0 to "
                          f"{MAX_USD_PER_MTOK:,.0f} (USD per million tokens)")
    return number


def _shown(value) -> str:
    try:
        return json.dumps(value)[:80] if not json_numbers.is_unusable(value) else repr(value)
    except (TypeError, ValueError):
        return str(value)[:80]


def _start_date(constraint, key: str = "") -> datetime.date | None | str:
    """A conditional price's start date; None when it has none; "other" for conditions on the time of day.  A start
    date that is not a date (12345, "soon") is refused (UpdateError), never read as a time-of-day price."""
    if constraint is None:
        return None
    start = _get(constraint, "start_date")
    if start is None:
        return "other"
    if isinstance(start, datetime.datetime):
        return start.date()
    if isinstance(start, datetime.date):
        return start
    try:
        if not isinstance(start, str):
            raise ValueError(start)
        return datetime.date.fromisoformat(start[:10])
    except ValueError:
        raise UpdateError(f"apis --update: {key}, constraint.start_date: {_shown(start)} is not a date; allowed: "
                          "YYYY-MM-DD (e.g. 2026-10-19)") from None


def price_on(prices, on: datetime.date, key: str = "") -> tuple[float, float] | None:
    """(USD per million input tokens, USD per million output tokens) of a genai-prices ``prices`` field on a date.

    A list of conditional prices uses the last one in force (no condition, or a start date on or before ``on``);
    of prices that differ by the time of day the highest (the standard price, not an off-peak discount).
    None when the output price is not given.  Raises UpdateError for a price or date that is not one."""
    if not isinstance(prices, list):
        return _pair(prices, key)
    chosen, by_hour = None, []
    for item in prices:
        start = _start_date(_get(item, "constraint"), key)
        if start is None or (isinstance(start, datetime.date) and start <= on):
            chosen = _pair(_get(item, "prices"), key)
        elif start == "other":
            by_hour.append(_pair(_get(item, "prices"), key))
    # prices that differ by the time of day: the highest is the standard price, the others off-peak discounts
    found = [p for p in (chosen, *by_hour) if p is not None]
    return max(found, key=lambda p: p[1]) if found else None


def _pair(prices, key: str = "") -> tuple[float, float] | None:
    if prices is None:
        return None
    inp = _number(_get(prices, "input_mtok"), key, "input_mtok")
    out = _number(_get(prices, "output_mtok"), key, "output_mtok")
    if out is None or out <= 0:
        return None
    return (inp or 0.0), out


def index_providers(providers) -> dict[str, object]:
    """{"provider id:model id": the model's prices} over genai-prices providers (JSON or package objects)."""
    if not isinstance(providers, list):
        raise UpdateError("the file is not genai-prices data: it must hold a list of providers "
                          f"(genai-prices' data.json, {DATA_JSON_URL})")
    out: dict[str, object] = {}
    for p in providers:
        pid = _get(p, "id")
        models = _get(p, "models")
        if not isinstance(pid, str) or not isinstance(models, list):
            raise UpdateError("the file is not genai-prices data: a provider without an id or a list of models "
                              f"(genai-prices' data.json, {DATA_JSON_URL})")
        for m in models:
            mid = _get(m, "id")
            if isinstance(mid, str):
                out[f"{pid}:{mid}"] = _get(m, "prices")
    return out


def providers_from_file(path) -> list:
    """genai-prices' data.json read from ``path``."""
    try:
        raw = read_regular_file(path, MAX_JSON_BYTES)
    except OSError as err:
        raise UpdateError(f"apis --update: {path} cannot be read ({err.strerror or err})") from None
    try:
        return json_numbers.loads(raw, str(path))  # a 401-digit number, NaN or Infinity anywhere: refused here
    except json_numbers.JsonNumberError as err:
        raise UpdateError(f"apis --update: {err}") from None
    except RecursionError:
        raise UpdateError(f"apis --update: {path} is nested too deeply to be genai-prices data") from None
    except (UnicodeDecodeError, ValueError) as err:
        raise UpdateError(f"apis --update: {path} is not JSON ({str(err)[:80]}); give genai-prices' data.json "
                          f"({DATA_JSON_URL})") from None


def providers_from_package() -> tuple[list, str]:
    """(providers, "genai-prices <version>") from the installed genai-prices package."""
    try:
        from importlib.metadata import version

        from genai_prices.data import providers  # type: ignore[import-not-found]
        return list(providers), f"genai-prices {version('genai-prices')}"
    except Exception as err:  # noqa: BLE001 - not installed, or an import of its dependencies fails
        raise UpdateError(f"apis --refresh needs the genai-prices package (pip install genai-prices): {type(err).__name__}: "
                          f"{str(err)[:80]}; or download its data.json ({DATA_JSON_URL}) and run gpu-tco apis --update FILE") from None


def builtin_rows() -> list[dict]:
    with open(catalog.DATA_DIR / "apis.csv", newline="", encoding="utf-8-sig") as fh:
        return [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in csv.DictReader(fh)]


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def updated_rows(rows: list[dict], providers, as_of: str, what: str) -> tuple[list[dict], list[str], list[str], list[str]]:
    """The rows with the prices the genai-prices data gives on ``as_of`` (rows it does not price are kept):
    (rows, updated names, changed names, missing names).  ``what`` names the data in the rows' source."""
    on = datetime.date.fromisoformat(as_of)
    index = index_providers(providers)
    out, updated, changed, missing = [], [], [], []
    for row in rows:
        row = dict(row)
        found = index.get(row.get("price_key", ""), None) if row.get("price_key") else None
        price = price_on(found, on, row.get("price_key", "")) if found is not None else None
        if price is None:
            missing.append(row["name"])
            out.append(row)
            continue
        inp, outp = _fmt(price[0]), _fmt(price[1])
        if (float(row.get("usd_per_mtok_input") or -1), float(row.get("usd_per_mtok_output") or -1)) != (float(inp), float(outp)):
            changed.append(row["name"])
        page = str(row.get("source", "")).split(" (as listed", 1)[0]
        row.update(usd_per_mtok_input=inp, usd_per_mtok_output=outp, as_of=as_of,
                   source=f"{page} (as listed in {what}; [genai_prices])")
        updated.append(row["name"])
        out.append(row)
    return out, updated, changed, missing


def csv_text(rows: list[dict]) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: r.get(c, "") for c in COLUMNS})
    return text.getvalue()


def update(providers, what: str, as_of: str | None = None, out: str | Path | None = None) -> UpdateResult:
    """Write the API price catalog with the prices of the genai-prices data ``providers``: by default to the user's
    apis.csv (``catalog.user_config_dir()``; its rows replace the built-in rows of the same name), starting from the
    built-in rows and the user's own rows; or to ``out``.  The catalogs are reloaded; a file the catalog refuses is
    not kept."""
    as_of = as_of or datetime.date.today().isoformat()
    if catalog.as_of_problem(as_of) or len(as_of) != 10:
        raise UpdateError(f"apis: --as-of {as_of!r} is not a date; allowed: a day, YYYY-MM-DD (e.g. 2026-12-01)")
    path = Path(out) if out else catalog.user_config_dir() / "apis.csv"
    rows = builtin_rows()
    if path.is_file():  # the user's rows (an earlier update, or their own) are updated too, and win by name
        try:
            with open(path, newline="", encoding="utf-8-sig") as fh:
                own = [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in csv.DictReader(fh)]
        except (OSError, UnicodeDecodeError, csv.Error) as err:
            raise UpdateError(f"apis --update: your file {path} cannot be read ({err}); fix or move it") from None
        by_name = {normalize(r.get("name", "")): i for i, r in enumerate(rows)}
        for r in own:
            i = by_name.get(normalize(r.get("name", "")))
            if i is None:
                rows.append(r)
            else:
                rows[i] = {**rows[i], **{k: v for k, v in r.items() if v != ""}}
    new, updated, changed, missing = updated_rows(rows, providers, as_of, what)
    def check_elsewhere(written: Path) -> None:  # a file elsewhere is not read by the catalogs: its rows as a user file's
        for line, row in enumerate(catalog._parse_file(written, "apis", COLUMNS)[0], start=2):
            catalog._check_row("apis", row, written, line)
    try:
        catalog.install_user_file(path, csv_text(new).encode("utf-8"), check_elsewhere if out else None)
    except OSError as err:
        raise UpdateError(f"apis --update: cannot write {path} ({err.strerror or err})") from None
    except GpuTcoError as err:
        raise UpdateError(f"apis --update: the updated file was refused ({err}); the old file is kept") from None
    return UpdateResult(path=path, as_of=as_of, updated=updated, changed=changed, missing=missing)
