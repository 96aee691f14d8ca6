"""Large refreshed catalogs: offers alike but dearer are left out of the planners without changing any answer, and
the work the planners do stays bounded as the offers file grows (speed itself is timed in installer/bench.py and
docs/benchmarks.md, not asserted here)."""
import csv
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_tco import core
from gpu_tco.core import catalog, planner, price_refresh
from gpu_tco.core.names import normalize, normalized

TRAIN_JOB = {"model": "Llama-3-8B", "method": "qlora", "tokens": 2e8}
SERVE_JOB = {"model": "Llama-3-8B", "requests_per_s": 5, "prompt_tokens": 1000, "output_tokens": 200,
             "ttft_slo_ms": 2000, "tpot_slo_ms": 50}
SERVE_GPUS = ["H100-SXM", "L40S"]


def _write_offers(path, rows: list[tuple[str, str, int, float]]) -> None:
    """A refreshed offers.csv: (name, gpu, GPUs per instance, USD per GPU-hour) per row, on-demand, billed by the hour."""
    header = (catalog.DATA_DIR / "offers.csv").read_text().splitlines()[0].split(",")
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        w.writeheader()
        for name, gpu, gpus, price in rows:
            w.writerow({c: "" for c in header} | {
                "name": name, "provider": "AWS", "instance": name, "gpu": gpu, "gpus_per_instance": gpus,
                "price_type": "on-demand", "interruptible": 0, "commitment_months": 0,
                "usd_per_instance_hour": round(gpus * price, 6), "usd_per_gpu_hour": price, "billing_increment_s": 3600,
                "source": f"{price_refresh.SOURCE}, fetched 2026-11-01", "as_of": "2026-11-01"})


def _refreshed(n: int, start: int = 0) -> list[tuple[str, str, int, float]]:
    """Rows as a refresh of many regions gives them: three GPUs, four machine sizes, 97 prices repeating."""
    return [(f"AWS inst-{i}", ("H100-SXM", "L40S", "A100-80GB-SXM")[i % 3], (1, 2, 4, 8)[i % 4], round(1 + i % 97 / 50, 6))
            for i in range(start, start + n)]


@pytest.fixture
def offers_file(tmp_path, monkeypatch):
    """Install rows as the user's offers.csv (the catalogs reloaded); the built-in catalogs come back afterwards."""
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))

    def install(rows):
        _write_offers(tmp_path / "offers.csv", rows)
        catalog.reload()
    yield install
    monkeypatch.undo()
    catalog.reload()


def _plain(option, fields) -> tuple:
    """An option's fields as comparable values (NaN as None); ``order`` is its place in the sweep, left out."""
    return tuple(None if isinstance(v, float) and math.isnan(v) else v for v in (option[f] for f in fields))


TRAIN_FIELDS = ("gpu", "n_gpus", "acquire", "offer", "cost_usd", "hours", "ok", "reasons", "within_tolerance")
SERVE_FIELDS = ("gpu", "n_gpus", "weights_dtype", "acquire", "offer", "replicas", "usd_per_month", "ok", "reasons",
                "within_tolerance")


def _answers(keep: int) -> tuple:
    """Both planners' answers with ``keep`` as the number of alike offers kept: the recommended option, the first
    ALIKE_OFFERS_KEPT options, the recommendation's words (training) and the best rental, purchase and choice (serving)."""
    top = core.ALIKE_OFFERS_KEPT
    trained = core.plan(dict(TRAIN_JOB), alike_kept=keep)
    served = core.plan({**SERVE_JOB, "task": "serve"}, gpus=SERVE_GPUS, alike_kept=keep)
    return ((_plain(trained["recommended"], TRAIN_FIELDS), [_plain(o, TRAIN_FIELDS) for o in trained["options"][:top]],
             core.compose_recommendation(trained).text),
            (_plain(served["recommended"], SERVE_FIELDS), [_plain(o, SERVE_FIELDS) for o in served["options"][:top]],
             _plain(served["best_rent"], SERVE_FIELDS), served["choice"], served["recommendation"]),
            trained["offers_left_out"], len(trained["options"]), len(served["options"]))


@pytest.mark.slow  # over 0.45 s
def test_offers_left_out_change_no_answer_and_no_list_of_the_first_options(offers_file):
    # 900 refreshed offers in 12 kinds (GPU x GPUs per machine), 97 prices repeating: most cost at least as much as
    # 25 earlier offers of their kind
    offers_file(_refreshed(900))
    every = _answers(keep=10**9)  # every offer weighed
    pruned = _answers(keep=planner.ALIKE_OFFERS_KEPT)
    assert every[2] == 0 and pruned[2] > 200, (every[2], pruned[2])
    assert pruned[3] < every[3] and pruned[4] < every[4]  # fewer options built ...
    assert pruned[:2] == every[:2]  # ... and the same answers, the same first options in the same order


def test_dearer_copies_of_offers_change_no_answer(offers_file):
    # the plans on a catalog of 25 offers of each kind, and on the same catalog with 1,500 copies (other names) that
    # each cost more than all 25 offers of their kind
    base = _refreshed(300)
    offers_file(base)
    before = _answers(keep=planner.ALIKE_OFFERS_KEPT)
    copies = [(f"AWS copy-{i}", gpu, gpus, round(3 + i % 7 / 10, 6)) for i, (_, gpu, gpus, _) in enumerate(base * 5)]
    offers_file(base + copies)
    after = _answers(keep=planner.ALIKE_OFFERS_KEPT)
    assert (before[2], after[2]) == (0, 1_500)
    assert after[:2] == before[:2]


def test_the_planners_weigh_a_bounded_number_of_offers_as_the_file_grows(offers_file):
    # linear loading, bounded planning: four times the refreshed rows, (nearly) the same offers weighed
    kept = {}
    for n in (2_500, 10_000):
        offers_file(_refreshed(n))
        weighed, left_out = core.planned_offers()
        kept[n] = sum(map(len, weighed.values()))
        priced = sum(1 for g, r in zip(catalog.offer_gpu_rows(), catalog.offers().rows)
                     if g >= 0 and "historical" not in r["price_type"] and r["usd_per_gpu_hour"] > 0)
        assert kept[n] + sum(left_out.values()) == priced  # every priced offer is weighed or counted as left out
    # an offer is weighed only while fewer than 25 of its kind cost no more: at most 25 per kind and price (12 kinds,
    # 97 prices), and in a file that repeats its prices the count grows with the logarithm of the rows, not the rows
    assert kept[10_000] < 1.5 * kept[2_500] and kept[10_000] <= planner.ALIKE_OFFERS_KEPT * 12 * 97, kept


def test_an_offer_is_left_out_only_behind_enough_alike_offers_no_dearer_than_it():
    # the rule on a hand-made catalog snapshot: kind A has 3 offers at 1.0, 2.0, 1.5 then one at 1.5 (two earlier no
    # dearer: kept with keep=3, left out with keep=2); kind B (another network) is never compared with kind A
    tabs = dict(catalog.tables())
    offers = tabs["offers"]
    start = len(offers.rows)
    base = next(r for r in offers.rows if r["gpu"] == "H100-SXM" and r["price_type"] == "on-demand" and not r["interruptible"]
                and not r["commitment_months"] and r["usd_per_gpu_hour"] > 0)
    rows = [dict(base, name=f"test-alike-{k}", usd_per_gpu_hour=p, usd_per_instance_hour=0.0, region=f"r{k}")
            for k, p in enumerate((1.0, 2.0, 1.5, 1.5))]
    rows.append(dict(base, name="test-other-network", usd_per_gpu_hour=9.0, usd_per_instance_hour=0.0,
                     fabric_gbps_per_gpu=base["fabric_gbps_per_gpu"] + 100))
    table = catalog.Table("offers", offers.rows[:] + rows, offers.columns, list(offers.files))
    snapshot = catalog.Snapshot({**tabs, "offers": table}, 0)
    gpu_of_offer = [-1 if r["name"] == "none" else tabs["gpus"].find(r["gpu"]) for r in table.rows]
    snapshot.memo["offer map lists"] = (gpu_of_offer, [])
    old = catalog._SNAPSHOT
    catalog._SNAPSHOT = snapshot
    try:
        h100 = tabs["gpus"].find("H100-SXM")
        for keep, left in ((3, []), (2, [start + 3])):
            weighed = core.planned_offers(keep)[0][h100]
            new = [i for i in range(start, start + 5) if i not in weighed]
            assert new == left, (keep, new)
            assert start + 4 in weighed  # the offer of another network is weighed whatever its price
    finally:
        catalog._SNAPSHOT = old


def test_the_alike_columns_hold_every_offer_column_a_formula_reads_but_the_price():
    # leaving an offer out is exact only if offers alike differ in nothing the formulas read but the price per GPU-hour
    from gpu_tco.core.codegen import compile_formulas
    compiled = compile_formulas(False)  # every quantity
    derived = compiled.derived.get("offers")
    read = set(compiled.row_fields["offers"]) - set(derived.names if derived else ()) | set(derived.fields if derived else ())
    alike = set(planner.alike_offer_columns(catalog.offers().columns))
    assert read - alike <= {"usd_per_gpu_hour"}, read - alike
    assert "usd_per_instance_hour" not in read  # the planners price by the GPU-hour: cost grows with it alone


def test_a_file_with_windows_line_ends_is_checked_once_not_cell_by_cell(tmp_path, monkeypatch):
    # Excel and Python's csv module end lines with CR LF; the whole-file check for characters a workbook cannot hold
    # must read that as a line end, or every cell of a 100,000-row file is checked on its own
    rows = _refreshed(50)
    _write_offers(tmp_path / "offers.csv", rows)
    lf = (tmp_path / "offers.csv").read_text(encoding="utf-8")
    crlf = lf.replace("\n", "\r\n")
    crlf = crlf.replace("fetched 2026-11-01", "fetched\r\n2026-11-01", 1)  # and a CR LF inside a quoted cell
    calls = []
    monkeypatch.setattr(catalog, "text_problem", lambda value: calls.append(value))
    read = {end: catalog._parse_text(tmp_path / "offers.csv", text, "offers", None, [])[0] for end, text in
            (("lf", lf), ("crlf", crlf))}
    assert calls == []
    assert read["crlf"][0]["source"] == read["lf"][0]["source"].replace("fetched 2026", "fetched\n2026")
    assert read["crlf"][1:] == read["lf"][1:] and len(read["lf"]) == 50
    # a control character is still found, and named by its row and column
    bad = lf.replace("AWS inst-7,", "AWS inst-\x077,", 1)
    monkeypatch.undo()
    with pytest.raises(core.CatalogError, match=r"row 9, column name: holds a control character \(code 7\)"):
        catalog._parse_text(tmp_path / "offers.csv", bad, "offers", None, [])


PIECES = [*"aZ09 .-_/\u00c5\u0130\u212a\u00df\n\u2028", "nvidia", "NVIDIA ", "Tesla", "amd", "GeForce", "instinct"]


@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), max_size=6))
def test_names_normalised_together_are_normalised_as_one_by_one(names):
    assert normalized(names) == [normalize(n) for n in names]


@pytest.mark.parametrize("keep", [0, -3, 2.5, "25", True])
def test_a_number_of_offers_alike_kept_that_is_no_whole_number_from_1_is_refused(keep):
    with pytest.raises(core.InputError, match="alike_kept: .* must be a whole number >= 1"):
        core.plan(dict(TRAIN_JOB), alike_kept=keep)
    with pytest.raises(core.InputError, match="alike_kept: .* must be a whole number >= 1"):
        core.plan({**SERVE_JOB, "task": "serve"}, alike_kept=keep)


@pytest.mark.parametrize("top", [-1, 1.5, True, "x", float("nan"), float("inf"), None])
def test_offers_kept_for_refuses_a_top_that_is_no_whole_number_from_0(top):
    """core.offers_kept_for is public: a negative, fractional, yes/no, text or NaN ``top`` is one InputError naming top
    (before: -1, 1.5 and True passed as 25 offers alike; "x" and NaN raised a bare ValueError)."""
    with pytest.raises(core.InputError, match=r"^top: .*must be a whole number >= 0"):
        core.offers_kept_for(top)
    assert core.offers_kept_for(10 ** 12) == 10 ** 12 and core.offers_kept_for(2.0) == core.ALIKE_OFFERS_KEPT


def test_excel_plan_tables_list_what_every_offer_would_give(offers_file):
    """GPU_PLAN(..., top) keeps enough offers alike for its top rows, and top 0 (every option) keeps them all: the
    same rows as the planner with nothing left out."""
    import sys

    from gpu_tco.addin.functions import call
    assert core.offers_kept_for(0) == sys.maxsize and core.offers_kept_for(3) == core.ALIKE_OFFERS_KEPT
    assert core.offers_kept_for(40) == 40
    offers_file(_refreshed(900))
    everything = core.plan(TRAIN_JOB, alike_kept=sys.maxsize)
    assert core.plan(TRAIN_JOB)["offers_left_out"]  # the default leaves some out on this file
    table = call("GPU_PLAN", "Llama-3-8B", "qlora", 2e8, None, None, None, None, None, 0, raise_errors=True)
    assert len(table) - 1 == len(everything["options"])
    ok = [o for o in everything["options"] if o["ok"]]
    top40 = call("GPU_PLAN", "Llama-3-8B", "qlora", 2e8, None, None, None, None, None, 40, raise_errors=True)
    assert [(r[1], r[2], r[4]) for r in top40[1:]] == [(o["gpu"], o["n_gpus"], o["offer"]) for o in ok[:40]]


@pytest.mark.slow  # over 0.45 s: two workbooks, one of them with a refreshed offers file
def test_the_workbook_lists_the_offers_an_answer_can_name(offers_file, tmp_path):
    """A refreshed file's dearer copies are left off the Cloud sheet (a refresh of 100,000 instances made an 8.6 MB
    workbook in 37 s); every offer the Options sheet names, and an offer the scenario names even where the planners
    leave it out, is listed; Start says how many were left out.  The built-in catalog is listed whole."""
    import openpyxl

    from gpu_tco.workbooks import write_workbook

    def cloud_names(book):
        ws = openpyxl.load_workbook(book, read_only=True)["Cloud"]
        return {row[0] for row in ws.iter_rows(min_row=2, values_only=True) if row[0]}

    whole = write_workbook(tmp_path / "whole.xlsx", TRAIN_JOB)
    assert cloud_names(whole) == set(catalog.offers().names)
    offers_file(_refreshed(900))
    left_out = core.offer_rows_left_out()
    names = catalog.offers().names
    assert left_out
    dear = names[max(left_out)]
    book = write_workbook(tmp_path / "refreshed.xlsx", {**TRAIN_JOB, "gpu": catalog.offers().row(dear)["gpu"], "offer": dear})
    listed = cloud_names(book)
    assert dear in listed and len(listed) == len(names) - len(left_out) + 1
    wb = openpyxl.load_workbook(book, read_only=True)
    rows = list(wb["Inputs"].iter_rows(values_only=True))  # the options' table: a header row naming "offer"
    head = next(k for k, row in enumerate(rows) if "offer" in row and "n_gpus" in row)
    column = rows[head].index("offer")
    named = {row[column] for row in rows[head + 1:] if row[column] in names}
    assert named and named <= listed
    start = " ".join(str(c) for row in wb["Start"].iter_rows(values_only=True) for c in row if c)
    assert f"{len(left_out) - 1} offers that cost at least as much as 25 offers alike are left out" in start
