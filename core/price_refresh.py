"""Today's cloud prices: offers fetched through gpuhunt and written as the user's offers file.

gpuhunt (dstack, "gpuhunt: a catalog of GPU cloud offers", MPL-2.0, https://github.com/dstackai/gpuhunt)
publishes a catalog of 9 providers (aws, azure, gcp, lambdalabs, nebius, oci, runpod, verda,
cloudrift), refreshed by dstack, and queries 9 more live (vastai, crusoe, ...).  With
``GPUHUNT_CATALOG_DIR`` set, gpuhunt reads ``<provider>.csv`` files from that folder instead of the
network, and so does this refresh (only the providers whose file is there).

Each offer becomes one row of the offers catalog (cheapest region per provider, instance and spot or
not), mapped to a catalog GPU by gpuhunt's GPU name, its memory and the instance's own facts (an
instance named "pcie" or an Azure NC series holds PCIe cards; 94 GB H100s are NVL).  The rows are
written to ``offers.csv`` in the user's config folder (``catalog.user_config_dir()``), which every
front end reads: a refreshed row named like a built-in row replaces it, the other built-in rows stay,
and rows the user wrote by hand are kept.
"""
from __future__ import annotations

import csv
import datetime
import io
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import catalog
from .errors import GpuTcoError
from .names import normalize
from .text import formula_safe

SOURCE = "gpuhunt catalog (dstack, https://github.com/dstackai/gpuhunt)"
OFFLINE_PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "runpod", "verda", "cloudrift")
PROVIDER_LABELS = {
    "aws": "AWS", "azure": "Azure", "gcp": "GCP", "lambdalabs": "Lambda", "nebius": "Nebius", "oci": "OCI",
    "runpod": "RunPod", "verda": "Verda (ex-DataCrunch)", "cloudrift": "CloudRift", "vastai": "vast.ai",
    "crusoe": "Crusoe", "daytona": "Daytona", "digitalocean": "DigitalOcean", "hotaisle": "Hot Aisle",
    "jarvislabs": "JarvisLabs", "lium": "Lium", "seeweb": "Seeweb", "vultr": "Vultr",
}
# Billing when neither a built-in row of the same instance nor of the same provider says: per hour, the
# coarsest common step, so a short job is never priced below what a provider may charge.
DEFAULT_BILLING_S = 3600
# gpuhunt's GPU names (gpuhunt/_internal/constraints.py, KNOWN_NVIDIA_GPUS and KNOWN_AMD_GPUS) that name one
# catalog GPU whatever the instance; H100, H200 and A100 also depend on memory and form factor (gpu_for)
SIMPLE_NAMES = {
    "B200": "B200", "GB200": "GB200", "B300": "B300", "GB300": "GB300", "H100NVL": "H100-NVL", "H200NVL": "H200-NVL",
    "L40S": "L40S", "L40": "L40", "L4": "L4", "A10": "A10", "A10G": "A10G", "A40": "A40", "A6000": "RTX-A6000",
    "RTX6000ADA": "RTX-6000-Ada", "RTX4090": "RTX-4090", "RTX5090": "RTX-5090", "RTX3090": "RTX-3090",
    "RTXPRO6000": "RTX-PRO-6000", "MI300X": "MI300X", "MI325X": "MI325X", "MI355X": "MI355X",
}


class RefreshError(GpuTcoError):
    """The refresh could not run (no gpuhunt, no network, an unreadable offers file); one line."""


@dataclass
class Offer:
    """One gpuhunt offer, as the refresh reads it."""
    provider: str
    instance: str
    region: str
    usd_per_instance_hour: float
    gpus: int
    gpu_name: str
    gpu_memory_gb: float
    spot: bool


@dataclass
class RefreshResult:
    path: Path
    as_of: str
    rows: list[dict]
    added: int
    replaced: int
    kept_builtin: int
    kept_own: int
    unmapped: list[dict] = field(default_factory=list)
    skipped_providers: list[str] = field(default_factory=list)
    impossible: list[dict] = field(default_factory=list)  # offers left out: a price or GPU count no instance has

    def impossible_line(self) -> str | None:
        """One line counting the offers left out for impossible values (impossible_reason), or None."""
        if not self.impossible:
            return None
        return (f"{len(self.impossible)} offers left out for impossible values ({IMPOSSIBLE_TEXT}), e.g. "
                f"{self.impossible[0]['provider']} {self.impossible[0]['instance']}: {self.impossible[0]['reason']}")

    def summary(self) -> str:
        own = f", {self.kept_own} of your own rows kept" if self.kept_own else ""
        return (f"{len(self.rows)} offers from gpuhunt as of {self.as_of}: {self.added} added, {self.replaced} replaced "
                f"built-in rows, {self.kept_builtin} built-in rows kept{own}; written to {self.path}")

    def unmapped_line(self) -> str | None:
        """One line naming the offers no catalog GPU matches, by gpuhunt GPU name with their count."""
        if not self.unmapped:
            return None
        counts: dict[str, int] = {}
        for u in self.unmapped:
            key = f"{u['gpu_name']} {u['gpu_memory_gb']:g} GB" if u["gpu_memory_gb"] else str(u["gpu_name"])
            counts[key] = counts.get(key, 0) + 1
        listed = ", ".join(f"{k} ({n})" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{len(self.unmapped)} offers not mapped to a catalog GPU (gpuhunt name, offers): {listed}"


def gpu_for(offer: Offer) -> str | None:
    """The catalog GPU an offer rents, or None.

    H100: 94-96 GB or "NVL" is the NVL pair card; "pcie" in the instance name is the PCIe card; otherwise
    SXM (HGX boards, what clouds list as H100 instances).  H200: "nvl"/"pcie" is the NVL card, else SXM.
    A100: 40 or 80 GB by memory; "pcie" in the instance name, or Azure's NC series, is PCIe, else SXM4.
    A GPU whose memory differs from the catalog GPU's by more than 10 % is not mapped.
    """
    name = offer.gpu_name.upper().replace(" ", "").replace("-", "")
    instance = offer.instance.lower()
    pcie = "pcie" in instance or (offer.provider == "azure" and instance.removeprefix("standard_").startswith("nc"))
    mem = offer.gpu_memory_gb or 0
    if name == "H100":
        gpu = "H100-NVL" if ("nvl" in instance or 90 <= mem <= 96) else "H100-PCIe" if pcie else "H100-SXM"
    elif name == "H200":
        gpu = "H200-NVL" if ("nvl" in instance or pcie) else "H200-SXM"
    elif name == "A100":
        size = "40GB" if 0 < mem <= 48 else "80GB"
        gpu = f"A100-{size}-{'PCIe' if pcie else 'SXM'}"
    else:
        gpu = SIMPLE_NAMES.get(name)
    if gpu is None:
        return None
    gpus = catalog.gpus()
    i = gpus.find(gpu)
    if i is None:
        return None
    listed = float(gpus.col["memory_gib"][i])
    if mem and abs(mem - listed) > 0.1 * listed:
        return None
    return gpus.names[i]


def offers_columns() -> list[str]:
    """The offers table's columns, read from the built-in file's header now, so columns added to it later
    are written too."""
    with open(catalog.DATA_DIR / "offers.csv", newline="", encoding="utf-8-sig") as fh:
        return [h.strip() for h in next(csv.reader(fh))]


def complete_row(values: dict, columns: list[str], template: dict | None = None) -> dict:
    """A row with every declared column: the given values, else the template row's (a built-in row of the
    same instance: its fabric, storage and billing facts hold for the refreshed price too), else empty
    text or 0."""
    row = {}
    for c in columns:
        if c in values:
            row[c] = values[c]
        elif template is not None and c in template:
            row[c] = template[c]
        else:
            row[c] = "" if c in catalog.TEXT_COLUMNS or c in ("notes",) else 0
    return row


# What no cloud instance has: gpuhunt passes on what a provider's API says, and a price of 1e-300 or a count of 1e11
# GPUs would become a $0 offer.  The largest instances hold 72 GPUs (GB200 NVL72); the cheapest GPU-hour listed is a
# few cents, the dearest a few tens of dollars.
MAX_GPUS_PER_INSTANCE = 1024
USD_PER_GPU_HOUR_RANGE = (0.001, 1000.0)
IMPOSSIBLE_TEXT = (f"GPUs per instance from 1 to {MAX_GPUS_PER_INSTANCE:,} and USD {USD_PER_GPU_HOUR_RANGE[0]:g} to "
                   f"{USD_PER_GPU_HOUR_RANGE[1]:,.0f} per GPU-hour are possible")


def impossible_reason(offer: Offer) -> str | None:
    """Why an offer's numbers are impossible (a GPU count or price per GPU-hour outside IMPOSSIBLE_TEXT), or None."""
    if not (1 <= offer.gpus <= MAX_GPUS_PER_INSTANCE):
        return f"{offer.gpus:g} GPUs per instance"
    per_gpu = offer.usd_per_instance_hour / offer.gpus
    if not (USD_PER_GPU_HOUR_RANGE[0] <= per_gpu <= USD_PER_GPU_HOUR_RANGE[1]):
        return f"USD {per_gpu:.6g} per GPU-hour"
    return None


def offer_rows(offers: list[Offer], as_of: str, impossible: list[dict] | None = None) -> tuple[list[dict], list[dict]]:
    """(rows, unmapped): one offers-catalog row per provider, instance and spot-or-not (the cheapest region; for a
    marketplace's listings, one row per GPU, count and spot-or-not at the median listing), and the offers no catalog
    GPU matches."""
    columns = offers_columns()
    builtin = _builtin_rows()
    by_name = {normalize(r["name"]): r for r in builtin}
    by_instance: dict[tuple, dict] = {}
    by_provider: dict[str, dict] = {}
    for r in builtin:
        by_instance.setdefault((normalize(r.get("provider", "")), normalize(r.get("instance", ""))), r)
        by_provider.setdefault(normalize(r.get("provider", "")), r)
    groups: dict[tuple, list[tuple[Offer, str]]] = {}
    unmapped = []
    for o in offers:
        if o.gpus < 1 or not o.usd_per_instance_hour or o.usd_per_instance_hour <= 0:
            continue  # no price: gpuhunt lists instances it has no price for
        reason = impossible_reason(o)
        if reason:
            if impossible is not None:
                impossible.append({"provider": o.provider, "instance": o.instance, "region": o.region, "reason": reason})
            continue
        gpu = gpu_for(o)
        if gpu is None:
            unmapped.append({"provider": o.provider, "instance": o.instance, "gpu_name": o.gpu_name,
                             "gpu_memory_gb": o.gpu_memory_gb, "gpus": o.gpus, "region": o.region,
                             "usd_per_instance_hour": o.usd_per_instance_hour, "spot": o.spot})
            continue
        if is_listing(o):  # one machine of a marketplace: its listings of the same GPUs make one row
            groups.setdefault((o.provider, f"{o.gpus}x {gpu} (marketplace)", o.spot), []).append((o, gpu))
        else:
            groups.setdefault((o.provider, o.instance, o.spot), []).append((o, gpu))
    rows = []
    seen: dict[str, int] = {}
    for (provider, instance, spot), members in sorted(groups.items(), key=lambda kv: min(m[0].usd_per_instance_hour for m in kv[1])):
        listing = is_listing(members[0][0])
        if listing:  # the median listing: the cheapest machine of a marketplace is seldom the one a job gets
            ordered = sorted(members, key=lambda m: (m[0].usd_per_instance_hour, m[0].region))
            best, gpu = ordered[(len(ordered) - 1) // 2]
        else:
            best, gpu = min(members, key=lambda m: (m[0].usd_per_instance_hour, m[0].region))
        label = PROVIDER_LABELS.get(provider, provider)
        shown = instance if listing else _instance_label(provider, instance)
        name = f"{label} {shown}" + (" spot" if spot else "")
        if normalize(name) in seen:
            continue  # "NVIDIA H100 PCIe" and "NVIDIA-H100-PCIe" are one name to the catalog: the cheaper stays
        seen[normalize(name)] = len(rows)
        template = by_name.get(normalize(name)) or by_instance.get((normalize(label), normalize(shown)))
        if template is None and normalize(label) in by_provider:
            base = by_provider[normalize(label)]  # the provider's storage, egress and billing, not its instance facts
            template = {k: base[k] for k in ("billing_increment_s", "usd_per_gb_month_storage", "usd_per_gb_egress",
                                              "commission_pct") if k in base}
        prices = sorted(m[0].usd_per_instance_hour for m in members)
        regions = len({m[0].region for m in members})
        if listing:
            spread = f"; the median of {len(members)} listings (${prices[0]:.2f} to ${prices[-1]:.2f} per instance-hour)"
        else:
            spread = (f"; the cheapest of {regions} regions (${prices[0]:.2f} to ${prices[-1]:.2f} per instance-hour)"
                      if regions > 1 else "")
        values = {
            "name": name, "aliases": "", "provider": label, "instance": shown, "gpu": gpu, "gpus_per_instance": best.gpus,
            "price_type": "spot" if spot else "marketplace" if listing else "on-demand", "interruptible": 1 if spot else 0,
            "commitment_months": 0,
            "usd_per_instance_hour": round(best.usd_per_instance_hour, 6),
            "usd_per_gpu_hour": round(best.usd_per_instance_hour / best.gpus, 6), "region": best.region,
            "description": f"{best.gpus}x {best.gpu_name}" + (f" {best.gpu_memory_gb:g} GB" if best.gpu_memory_gb else "") + spread,
            "source": f"{SOURCE}, fetched {as_of}", "as_of": as_of,
        }
        if template is None or "billing_increment_s" not in template:
            values["billing_increment_s"] = DEFAULT_BILLING_S
        rows.append(complete_row(values, columns, template))
    rows.sort(key=lambda r: (r["provider"], r["instance"], r["price_type"]))
    return rows, unmapped


MARKETPLACES = ("vastai",)  # providers whose offers are single machines listed by their owners


def is_listing(offer: Offer) -> bool:
    """A marketplace listing (a machine's number, not an instance type): vast.ai's offers, or any offer named by digits only."""
    return offer.provider in MARKETPLACES or offer.instance.strip().isdigit()


def _instance_label(provider: str, instance: str) -> str:
    """Azure's "Standard_ND96isr_H100_v5" as its documentation and the built-in rows write it, "ND96isr H100 v5"."""
    if provider == "azure":
        return instance.removeprefix("Standard_").replace("_", " ")
    return instance


def _builtin_rows() -> list[dict]:
    with open(catalog.DATA_DIR / "offers.csv", newline="", encoding="utf-8-sig") as fh:
        return [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in csv.DictReader(fh) if r.get("name") != "none"]


def is_refreshed(row: dict) -> bool:
    return str(row.get("source", "")).startswith(SOURCE)


def refreshed_note(rows: list[dict]) -> str | None:
    """How many of the offers rows came from a refresh, and when ("12 of them refreshed through gpuhunt on
    2026-11-02"), for the lines that say how old the prices are; None when none did."""
    dates = [str(r.get("as_of", "")) for r in rows if str(r.get("source", "")).startswith(SOURCE)]  # is_refreshed, inlined
    if not dates:
        return None
    oldest, newest = min(dates), max(dates)
    when = newest if oldest == newest else f"{oldest} to {newest}"
    return f"{len(dates)} of them refreshed through gpuhunt on {when}"


def write_offers(rows: list[dict], unmapped: list[dict], as_of: str, user_dir: Path | None = None,
                 skipped: list[str] | None = None) -> RefreshResult:
    """Write the refreshed rows as the user's offers.csv (atomically), keeping the user's own rows; reload the catalogs."""
    folder = catalog.user_config_dir() if user_dir is None else Path(user_dir)
    path = folder / "offers.csv"
    columns = offers_columns()
    own: list[dict] = []
    if path.is_file():
        try:
            with open(path, newline="", encoding="utf-8-sig") as fh:
                own = [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in csv.DictReader(fh)]
        except (OSError, UnicodeDecodeError, csv.Error) as err:
            raise RefreshError(f"offers --refresh: your offers file {path} cannot be read ({err}); fix or move it") from None
        own = [r for r in own if not is_refreshed(r)]  # an earlier refresh's rows are replaced as a whole
    own_names = {normalize(r.get("name", "")) for r in own}
    fresh = [r for r in rows if normalize(r["name"]) not in own_names]  # a row the user wrote by hand wins
    builtin = {normalize(r["name"]) for r in _builtin_rows()}
    replaced = sum(1 for r in fresh if normalize(r["name"]) in builtin)
    replaced_own = sum(1 for r in own if normalize(r.get("name", "")) in builtin)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns + (["notes"] if any("notes" in r for r in own) else []),
                            extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in own:
        writer.writerow(complete_row(r, writer.fieldnames))
    for r in fresh:
        writer.writerow(r)
    if len(own) + len(fresh) > catalog.MAX_CATALOG_ROWS:
        raise RefreshError(f"offers --refresh: {len(own) + len(fresh):,} rows are more than a catalog holds "
                           f"({catalog.MAX_CATALOG_ROWS:,}); the old file is kept")
    try:
        catalog.install_user_file(path, out.getvalue().encode("utf-8"))
    except OSError as err:
        raise RefreshError(f"offers --refresh: cannot write {path} ({err.strerror or err})") from None
    except GpuTcoError as err:
        raise RefreshError(f"offers --refresh: the refreshed offers file was refused ({err}); the old file is kept") from None
    return RefreshResult(path=path, as_of=as_of, rows=fresh, added=len(fresh) - replaced, replaced=replaced,
                         kept_builtin=len(builtin) - replaced - replaced_own, kept_own=len(own), unmapped=unmapped,
                         skipped_providers=list(skipped or []))


Progress = Callable[[int, int, str], None]


def fetch_offers(progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> tuple[list[Offer], list[str]]:
    """(offers, skipped providers) from gpuhunt: the local catalog in GPUHUNT_CATALOG_DIR when set, else the
    published catalog and the live providers gpuhunt can query without credentials.  ``progress(done, total,
    provider)`` is called before each provider; ``cancelled()`` returning True stops between providers."""
    try:
        import gpuhunt
    except ImportError:
        raise RefreshError("offers --refresh needs gpuhunt: pip install 'gpu-tco[live]'") from None
    quiet = logging.getLogger("gpuhunt")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # gpuhunt logs each provider it skips; the summary says so once
    try:
        local = os.environ.get("GPUHUNT_CATALOG_DIR")
        cat = gpuhunt.Catalog(auto_reload=False)
        skipped: list[str] = []
        if local:
            if not Path(local).is_dir():
                raise RefreshError(f"offers --refresh: GPUHUNT_CATALOG_DIR {local} is not a folder")
            providers = [p for p in OFFLINE_PROVIDERS if (Path(local) / f"{p}.csv").is_file()]
            if not providers:
                raise RefreshError(f"offers --refresh: GPUHUNT_CATALOG_DIR {local} holds no <provider>.csv file "
                                   f"({', '.join(OFFLINE_PROVIDERS)})")
        else:
            if progress:
                progress(0, 1, "the published catalog")
            try:
                cat.load()
            except Exception as err:
                reason = getattr(err, "__cause__", None) or err
                raise RefreshError(f"offers --refresh: cannot download the gpuhunt catalog ({_reason(reason)}); "
                                   "check the network connection") from None
            loaded = [p for p in OFFLINE_PROVIDERS if p in cat.catalog]  # gpuhunt keeps going when some fail
            skipped += [f"{p} (its catalog did not download)" for p in OFFLINE_PROVIDERS if p not in cat.catalog]
            providers = loaded + _add_live_providers(cat)
        offers: list[Offer] = []
        for n, provider in enumerate(providers):
            if cancelled and cancelled():
                raise RefreshError("offers --refresh: cancelled; the offers file is unchanged")
            if progress:
                progress(n, len(providers), provider)
            try:
                items = cat.query(provider=provider, min_gpu_count=1)
            except Exception as err:
                skipped.append(f"{provider} ({_reason(err)})")
                continue
            offers += [Offer(provider=provider, instance=_cell_text(i.instance_name), region=_cell_text(i.location),
                             usd_per_instance_hour=_finite(i.price), gpus=_count(i.gpu_count), gpu_name=_cell_text(i.gpu_name or ""),
                             gpu_memory_gb=_finite(i.gpu_memory), spot=bool(i.spot)) for i in items]
        if progress:
            progress(len(providers), len(providers), "done")
        if not offers and skipped:
            raise RefreshError(f"offers --refresh: no provider answered: {'; '.join(skipped)}")
        return offers, skipped
    finally:
        quiet.setLevel(level)


def _cell_text(text) -> str:
    """Text a catalog cell can hold: control characters (which a spreadsheet refuses) become spaces, and text a
    spreadsheet would run as a formula (=, +, -, @ first) is kept as text (``formula_safe``): users open offers.csv
    in Excel."""
    if text is None or (isinstance(text, float) and not math.isfinite(text)):
        return ""
    return formula_safe(catalog.CONTROL_CHARACTERS.sub(" ", str(text)).strip())


def _finite(value) -> float:
    """A number from gpuhunt (a pandas cell: NaN when empty), 0.0 when missing, not finite or not a number."""
    try:
        x = float(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return x if math.isfinite(x) else 0.0


def _count(value) -> int:
    """A GPU count from gpuhunt; 0 (left out as impossible) when not a whole number."""
    x = _finite(value)
    return int(x) if x == int(x) else 0


def _add_live_providers(cat) -> list[str]:
    """The providers gpuhunt queries live (its default catalog's list), those that need no credentials."""
    try:
        import importlib

        from gpuhunt._internal.default import ONLINE_PROVIDER_MODULES
    except ImportError:
        return []
    names = []
    for module_name, class_name in ONLINE_PROVIDER_MODULES:
        try:
            provider = getattr(importlib.import_module(module_name), class_name).from_env()
        except Exception:  # a provider needing credentials or a package that is not installed is left out
            continue
        cat.add_provider(provider)
        names.append(provider.NAME)
    return names


def _reason(err) -> str:
    text = str(getattr(err, "reason", None) or err).splitlines()[0] if str(err) else type(err).__name__
    return text[:160]


def refresh(progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
            user_dir: Path | None = None, today: datetime.date | None = None) -> RefreshResult:
    """Fetch today's offers through gpuhunt and write them as the user's offers file (see the module's text)."""
    as_of = (today or datetime.date.today()).isoformat()
    offers, skipped = fetch_offers(progress, cancelled)
    impossible: list[dict] = []
    rows, unmapped = offer_rows(offers, as_of, impossible)
    if cancelled and cancelled():
        raise RefreshError("offers --refresh: cancelled; the offers file is unchanged")
    if not rows:  # an empty, header-only or unusable provider file: never a reason to drop the earlier refresh
        path = (catalog.user_config_dir() if user_dir is None else Path(user_dir)) / "offers.csv"
        kept = earlier_refreshed_rows(path)
        raise RefreshError(f"offers --refresh: no offers read: gpuhunt gave {len(offers)} offers, {len(unmapped)} of them not "
                           f"mapped to a catalog GPU and {len(impossible)} with impossible values"
                           + (f" ({'; '.join(skipped)})" if skipped else "")
                           + f"; kept the earlier {kept} refreshed rows" + (f" of {path}" if kept else "") + " as they were")
    result = write_offers(rows, unmapped, as_of, user_dir, skipped)
    result.impossible = impossible
    return result


def earlier_refreshed_rows(path: Path) -> int:
    """How many rows of an earlier refresh the user's offers file holds (0 when there is none or it cannot be read)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return sum(1 for r in csv.DictReader(fh) if is_refreshed(r))
    except (OSError, UnicodeDecodeError, csv.Error):
        return 0
