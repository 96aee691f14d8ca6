"""The workbook of a serving scenario (task "serve"): Start answers rent, buy or use the API with live formulas.

The serving planner (``core.serve_plan``) chooses the cheapest rented and the cheapest bought setup when the file is
written; the Serving sheet recomputes each of them with the formula layer's Excel rendering of the serving quantities
(``QUANTITIES[name].expr.xl``, the expressions the Python values come from), so a change of the demand, the targets,
a price or the API on Inputs moves replicas, latency, cost per million tokens, the monthly costs and the volumes above
which each wins.  Inputs, Calc and the catalog sheets are built as the training workbook builds them (``workbooks.common``), the Inputs
sheet's GPU, count, offer and weight format being the recommended setup.
"""
from __future__ import annotations

from typing import Mapping

from openpyxl import Workbook
from openpyxl.styles import Font, Protection
from openpyxl.utils import get_column_letter

from gpu_tco import core
from gpu_tco.core import INPUTS_BY_NAME as BY_NAME
from gpu_tco.core import (
    QUANTITIES,
    SERVE_RANKING,
    ancestors,
    catalog,
    depending_on,
    serve_option_inputs,
    serve_option_text,
    serve_plan,
)

from .common import (
    INPUT_FILL,
    NOTE_FONT,
    USD,
    USD_MILLS,
    WHOLE,
    Layout,
    Scenario,
    _calc_sheet,
    _catalog_sheets,
    _head,
    _inputs_sheet,
    _note,
    _number_format,
    _plain,
    _start_ages,
    _widths,
    fit_heights,
    page_setup,
    resolved_offer_xl,
)
from .xlsx import not_in_default_print, put_text, top_aligned

SETUP_INPUTS = ("gpu", "n_gpus", "weights_dtype", "offer", "buy", "gpus_per_server")
WAYS = {"rent": ("cheapest rented", "renting"), "buy": ("cheapest bought", "buying")}
# what Start reads of each setup; "{way}" is rent or own
SETUP_OUTPUTS = ("serve_replicas", "ttft_ms", "tpot_ms", "serve_ok", "serve_batch", "serve_option_usd_per_month",
                 "ttft_ms_likely_low", "ttft_ms_likely_high", "tpot_ms_likely_low", "tpot_ms_likely_high",
                 "serve_{way}_usd_per_mtok_input", "serve_{way}_usd_per_mtok_output", "serve_{way}_beats_api_mtok_per_month",
                 "serve_ttft_at_load_ms", "serve_tpot_at_load_ms", "ttft_queue_wait_ms", "serve_load_fraction", "serve_load_after_failure",
                 "serve_single_failure_stops", "serve_servers", "own_gpus", "serve_gpus", "own_capital_usd",
                 "serve_load_after_server_failure", "serve_layout_batch",
                 "serve_disaggregated", "disagg_prefill_replicas", "disagg_decode_replicas", "disagg_kv_transfer_ms",
                 "serve_layout_reason_code", "serve_aggregated_gpus", "disagg_gpus", "serve_replicas_for_load",
                 "disagg_kv_link_gb_per_s", "disagg_kv_link_code", "serve_lowered_utilization")
TEXT_ROWS = ("words", "lead", "wins", "notes")   # a setup in words, the answer when it leads, and when it beats the API
NEVER = '[<0]"never";#,##0'             # a volume of -1 means never
MS = '#,##0.0 "ms"'


def _way(key: str) -> str:
    return "own" if key == "buy" else "rent"


def ms_xl(x: str) -> str:
    """Milliseconds in words as core.ms_text writes them: a tenth below 10 ms, whole ones above."""
    return f'IF({x}<10,TEXT({x},"0.0"),TEXT({x},"#,##0"))'


def money_xl(x: str) -> str:
    """Dollars as every door prints them (core.recommendation.usd_text): cents below $100."""
    return f'IF(ABS({x})<100,TEXT({x},"$#,##0.00"),TEXT({x},"$#,##0"))'


def engine_xl() -> str:
    """The engine in words as core says it (``core.engine_text``): the catalog's label, and " (the default engine)"
    for the default."""
    return (f'INDEX(engines_label,MATCH(engine,engines_name,0))&IF(engine="{BY_NAME["engine"].default}",'
            '" (the default engine)","")')


def likely_xl(value: str, low: str, high: str) -> str:
    """A latency with its likely range as core writes it (``core.likely_text``): "42 ms (likely 35-50)"; whole
    milliseconds from 10 ms (thousands separated from 100 ms), tenths below 10 ms."""
    fmt = f'IF({value}>=100,"#,##0",IF({value}<10,"0.0","0"))'
    return (f'TEXT({value},{fmt})&" ms (likely "&TEXT({low},{fmt})&"-"&TEXT({high},{fmt})&")"')


def layout_xl(ref) -> str:
    """The layout and why in words, as core says it (``core.serving.LAYOUT_REASONS`` by serve_layout_reason_code)."""
    from gpu_tco.core import SERVING_LAYOUT_REASONS as LAYOUT_REASONS
    agg, dis = f'TEXT({ref("serve_aggregated_gpus")},"#,##0")', f'TEXT({ref("disagg_gpus")},"#,##0")'
    layout = f'IF({ref("serve_disaggregated")},"disaggregated","aggregated")'

    def text(code):
        parts = LAYOUT_REASONS[code].replace('"', '""').split("{")
        out = [f'"{parts[0]}"']
        for part in parts[1:]:
            name, rest = part.split("}", 1)
            out += [{"agg": agg, "dis": dis, "layout": layout, "pct": "disaggregation_min_saving_pct"}[name], f'"{rest}"']
        return "&".join(o for o in out if o != '""')
    from gpu_tco.core import KV_LINK_WORDS
    link = ref("disagg_kv_link_gb_per_s")
    words = ",".join('"' + KV_LINK_WORDS[c].replace('"', '""') + '"' for c in sorted(KV_LINK_WORDS))
    over = (f'IF(AND({link}>0,{ref("disagg_kv_link_code")}>0)," over "&TEXT({link}*8,"#,##0")&" Gbit/s per GPU ("'
            f'&CHOOSE({ref("disagg_kv_link_code")},{words})&")","")')
    moved = (f'IF({ref("serve_disaggregated")},", each prompt\'s KV cache sent in "&TEXT({ref("disagg_kv_transfer_ms")},"#,##0.0")'
             f'&" ms"&{over},"")')
    return f'CHOOSE({ref("serve_layout_reason_code")},{",".join(text(c) for c in sorted(LAYOUT_REASONS))})&{moved}'


def _upper_first_xl(x: str) -> str:
    return f"UPPER(LEFT({x},1))&MID({x},2,1000)"


def build_serving_workbook(inputs: Mapping, gpus: list[str] | None = None) -> tuple[Workbook, dict]:
    """The serving workbook and its {sheet!cell: cached value} map (the training workbook's contract)."""
    result = serve_plan(dict(inputs), gpus=gpus)
    setups = {key: result[f"best_{key}"] for key in WAYS if result[f"best_{key}"] is not None}
    shown = result["recommended"] or next(iter(result["options"]), None)
    scenario = serve_option_inputs(result["given"], shown) if shown is not None else dict(result["given"])
    job = Scenario.of({**scenario, "task": "serve"}, [])
    wb, lay = Workbook(), Layout()
    start = wb.active
    start.title = "Start"
    sheets = {title: wb.create_sheet(title) for title in ("Inputs", "Serving", "Calc")}
    _inputs_sheet(wb, sheets["Inputs"], job, lay)
    _calc_sheet(wb, sheets["Calc"], job, lay)
    cells = _serving_sheet(sheets["Serving"], result, setups, lay)
    adhoc = job.values.get("model__adhoc")
    tabs = catalog.tables()
    _catalog_sheets(wb, tabs, {"models": [adhoc]} if adhoc is not None and adhoc["name"] not in tabs["models"].names else {},
                    offer=str(job.values.get("offer", "")))
    _serve_start(start, tabs, result, setups, cells, lay)
    _tradeoff_sheet(wb, result, lay)
    wb.calculation.fullCalcOnLoad = True
    wb.properties.creator = wb.properties.lastModifiedBy = "gpu-tco"
    return wb, lay.cached


def _served_by(api: str) -> str:
    """" (Llama-3.1-8B)": the catalog model the API serves, for the sentence about an API of another model (a constant
    of the file: that sentence applies only while the file's model and API stay)."""
    apis = catalog.tables()["apis"]
    served = str(apis.rows[apis.find(api)].get("catalog_model") or "") if apis.find(api) is not None else ""
    return f" ({served.replace(chr(34), chr(34) * 2)})" if served else ""


def _setup_rows(setups: Mapping) -> tuple[list[str], dict[str, int]]:
    """The Serving sheet's rows: the setup (its inputs), then the setup's quantities in definition order."""
    wanted = [n.format(way=_way(k)) for k in setups for n in SETUP_OUTPUTS]
    moving = set(depending_on(SETUP_INPUTS))
    per_setup = [n for n in ancestors(wanted) if n in moving]
    names = ["offer_given", *SETUP_INPUTS, "price_type", *per_setup, *TEXT_ROWS]
    return per_setup, {name: 2 + i for i, name in enumerate(names)}


def _serving_sheet(ws, result: Mapping, setups: Mapping, lay: Layout) -> dict:
    """Serving: one column per setup (the cheapest rented, the cheapest bought) with the serving quantities over
    that setup; below, the demand and the API in words.  Returns {(key, row name): cell} for Start."""
    per_setup, rows = _setup_rows(setups)
    _head(ws, 1, ["quantity", "unit", *(WAYS[k][0] for k in setups)])
    ws.freeze_panes = "C2"
    for name, r in rows.items():
        ws.cell(row=r, column=1, value=name)
        unit = QUANTITIES[name].unit if name in QUANTITIES else BY_NAME[name].unit if name in BY_NAME else ""
        ws.cell(row=r, column=2, value="" if unit in ("-", "flag") else unit)
    cells = {}
    for j, (key, option) in enumerate(setups.items()):
        col = get_column_letter(3 + j)
        cells.update({(key, name): f"Serving!${col}${r}" for name, r in rows.items()})
        _setup_column(ws, col, key, option, result, per_setup, rows, lay)
    r = max(rows.values()) + 2
    ws.cell(row=r, column=1, value="the demand in words")
    ws.cell(row=r + 1, column=1, value="the API in words")
    volume = ('TEXT(serve_mtok_per_month,"#,##0")&" million tokens a month ("&TEXT(serve_demand_requests_per_s,"General")'
              '&" requests/s for "&TEXT(hours_per_day,"General")&" h a day)"')
    given = "AND(api_usd_per_mtok_input>0,api_usd_per_mtok_output>0)"
    # an API of another model (core.serving.api_serves_model, decided when the file is written): named for scale, never
    # the answer; while the model and the API stay those of the file, and no prices are typed in
    inputs = result["inputs"]
    other = ("FALSE" if result["api"].get("same_model", True) else
             f'AND(NOT({given}),api_model="{inputs["api_model"]}",model="{inputs["model"]}")')
    api = (f'"the API "&IF({given},"at the prices given",api_model)&" ($"&TEXT(serve_api_usd_per_mtok_input,"General")'
           f'&" input, $"&TEXT(serve_api_usd_per_mtok_output,"General")&" output per million tokens"'
           f'&IF({given},"",", prices as of "&INDEX(apis_as_of,MATCH(api_model,apis_name,0)))&") costs "'
           f'&{money_xl("serve_api_usd_per_month")}&" a month"'
           f'&IF({other},", though it serves another model{_served_by(inputs["api_model"])}: no API in the catalog serves "&model'
           f'&" {core.API_OTHER_MODEL_HINT.replace(chr(34), chr(34) * 2)}","")')
    ws.cell(row=r + 2, column=1, value="the API's cost a month, as a substitute")
    compared = f'IF({other},1E+300,serve_api_usd_per_month)'
    for k, formula in ((r, volume), (r + 1, api), (r + 2, compared)):
        ws.cell(row=k, column=3, value="=" + formula)
        lay.cached[f"Serving!C{k}"] = ""
    cells["volume"], cells["api"] = f"Serving!$C${r}", f"Serving!$C${r + 1}"
    cells["api_month"] = f"Serving!$C${r + 2}"
    # an API of another model is priced out of every comparison with 1E+300: the cell says why instead of the number
    ws.cell(row=r + 2, column=3).number_format = '[>=1E+299]"none: it serves another model";"$"#,##0'
    _note(ws, f"A{r + 4}", "Each column is a setup the serving planner chose when this file was written (the yellow cells); "
                           "change one to try another GPU, GPUs per replica, weight format, offer or buy (1) / rent (0). "
                           "Every number below them follows Inputs.", "D", 45, NOTE_FONT)
    _widths(ws, {"A": 38, "B": 12, "C": 34, "D": 34})
    fit_heights(ws, lay.cached)
    not_in_default_print(ws, 2 + len(setups), title_rows="1:1")  # printed: Start and Inputs, as the training workbook
    ws.protection.sheet = True
    return cells


def _setup_column(ws, col: str, key: str, option, result: Mapping, per_setup: list[str], rows: Mapping, lay: Layout) -> None:
    """One setup's column: its inputs (yellow), the resolved offer, and each serving quantity's formula over them."""
    inputs = serve_option_inputs(result["given"], option)
    values = core.evaluate(inputs, outputs=per_setup)
    resolved = core.resolve_inputs(inputs)

    def ref(name: str) -> str:
        return f"{col}{rows[name]}" if name in rows else name
    way, word = _way(key), WAYS[key][1]
    words = (f'IF({ref("serve_disaggregated")},{ref("disagg_prefill_replicas")}&" prefill and "&{ref("disagg_decode_replicas")}'
             f'&" decode replicas of ",IF({ref("serve_replicas")}<>1,{ref("serve_replicas")}&" replicas of ",""))&{ref("n_gpus")}'
             f'&"x "&{ref("gpu")}&" ("&{ref("weights_dtype")}&")"')
    servers = (f'{ref("serve_servers")}&IF({ref("serve_servers")}=1," server of "," servers of ")&{ref("own_server_gpus")}'
               f'&"x "&{ref("gpu")}&" holding "') if "own_server_gpus" in rows else '""'
    words = f'"buy "&{servers}&{words}' if key == "buy" else f'"rent "&{words}&" from "&{ref("offer")}&" ("&{ref("price_type")}&")"'
    month, above = ref("serve_option_usd_per_month"), ref(f"serve_{way}_beats_api_mtok_per_month")
    capital = f'&" ("&{money_xl(ref("own_capital_usd"))}&" of capital)"' if key == "buy" else ""
    lead = (f'{_upper_first_xl(ref("words"))}{capital}&" with "&{engine_xl()}&": "&{likely_xl(ref("tpot_ms"), ref("tpot_ms_likely_low"), ref("tpot_ms_likely_high"))}'
            f'&" per token, first token in "&{likely_xl(ref("ttft_ms"), ref("ttft_ms_likely_low"), ref("ttft_ms_likely_high"))}'
            f'&" at full load (a batch of "&TEXT({ref("serve_layout_batch")},"0")&"); at the planned load "&{ms_xl(ref("serve_tpot_at_load_ms"))}'
            f'&" ms per token, first token in "&{ms_xl(ref("serve_ttft_at_load_ms"))}&" ms with the queue, "&{money_xl(month)}&" a month ($"&TEXT({ref(f"serve_{way}_usd_per_mtok_input")},"0.00")'
            f'&" per million input and $"&TEXT({ref(f"serve_{way}_usd_per_mtok_output")},"0.00")&" per million output tokens) for "'
            f'&Serving!$C${max(rows.values()) + 2}&"; "&Serving!$C${max(rows.values()) + 3}')
    wins = (f'IF({above}>=0,"{word} beats the API above "&TEXT({above},"#,##0")&" million tokens a month",'
            f'"{word} never beats the API at these prices")')
    spare, after = f'({ref("serve_replicas")}-{ref("serve_replicas_for_load")})', ref("serve_load_after_failure")
    bits = f'INDEX(weight_dtypes_bits_per_param,MATCH({ref("weights_dtype")},weight_dtypes_name,0))'
    apart = ref("serve_disaggregated")
    planned = ref("serve_lowered_utilization")
    notes = (f'"Planned at "&TEXT({ref("serve_load_fraction")},"0%")&" load (target utilization "&TEXT(target_utilization,"0%")'
             f'&IF({planned}<target_utilization,", "&IF({apart},"the prefill replicas ","")&"lowered to "&TEXT({planned},"0%")'
             f'&" for the first-token target","")'
             f'&", "&{spare}&" spare "&IF({spare}=1,"replica","replicas")&"); first token in "&TEXT({ref("serve_ttft_at_load_ms")},"#,##0")'
             f'&" ms with "&TEXT({ref("ttft_queue_wait_ms")},"#,##0")&" ms of queueing (Poisson arrivals: M/M/c for a sequence slot, '
             f'M/D/1 for the prefill ahead); layout: "&{layout_xl(ref)}&"; "&IF({ref("serve_single_failure_stops")},IF({ref("serve_replicas")}<=1,'
             f'"one failure stops the service: a single replica","one failure overloads the service: the other replicas would run at "'
             f'&TEXT({after},"0%")&" {core.SPARE_REPLICA_HINT}"),"one failed replica leaves the rest at "&TEXT({after},"0%")&" load")'
             + (f'&IF({ref("serve_servers")}<=1,"; one server failure stops the service: every replica is in one server",'
                f'IF({ref("serve_load_after_server_failure")}>1,"; one server failure overloads the service: the rest would run at "'
                f'&TEXT({ref("serve_load_after_server_failure")},"0%"),"; one failed server leaves the rest at "'
                f'&TEXT({ref("serve_load_after_server_failure")},"0%")&" load"))'
                f'&IF({ref("own_gpus")}>{ref("serve_gpus")},"; "&({ref("own_gpus")}-{ref("serve_gpus")})&" of the "&{ref("own_gpus")}'
                f'&" GPUs bought "&IF({ref("own_gpus")}-{ref("serve_gpus")}=1,"is","are")&" free for other work","")'
                f'&IF(INDEX(gpus_consumer,MATCH({ref("gpu")},gpus_name,0))=1,"; "&{ref("gpu")}&"{GEFORCE_TAIL}","")'
                if key == "buy" else "")
             + f'&IF({bits}<8,"; weights in "&{ref("weights_dtype")}&" ("&{bits}&" bits): accuracy "'
               f'&INDEX(weight_dtypes_accuracy_effect,MATCH({ref("weights_dtype")},weight_dtypes_name,0)),"")&"."')
    formulas = {"offer": "=" + resolved_offer_xl(ref("gpu"), ref("offer_given"), ref("n_gpus")), "notes": "=" + notes,
                "price_type": f'=IF({ref("buy")}=1,"",INDEX(offers_price_type,MATCH({ref("offer")},offers_name,0)))',
                **{name: "=" + QUANTITIES[name].expr.xl(ref) for name in per_setup},
                "words": "=" + words, "lead": "=" + lead, "wins": "=" + wins}
    given = {"offer_given": inputs["offer"], "gpu": resolved["gpu"], "n_gpus": int(resolved["n_gpus"]),
             "weights_dtype": resolved["weights_dtype"], "buy": int(inputs["buy"]),
             "gpus_per_server": int(resolved["gpus_per_server"])}
    cached = {**{n: _plain(values[n]) for n in per_setup}, "offer": resolved["offer"], "price_type": option.price_type,
              "words": serve_option_text(option), "lead": "", "wins": "", "notes": ""}
    for name, r in rows.items():
        c = ws[f"{col}{r}"]
        if name in given:
            put_text(c, given[name])
            c.fill, c.protection = INPUT_FILL, Protection(locked=False)
            lay.cached[f"Serving!{col}{r}"] = given[name]  # not a formula: read by Start's cached values only
        else:
            c.value = formulas[name]
            lay.cached[f"Serving!{col}{r}"] = cached[name]
            if name in QUANTITIES:
                c.number_format = _number_format(QUANTITIES[name].unit)
        c.alignment = top_aligned(wrap=name in TEXT_ROWS)


GEFORCE_TAIL = core.SERVE_CONSUMER_LICENSE.split("{gpu}", 1)[1]  # core's words after the GPU's name


def answer_xl(setups: Mapping, cells: Mapping) -> str:
    """Start's answer as one formula: core's serving sentence (``serve_sentence``) over the Serving sheet's cells:
    the cheapest way at the demand leads (rent, buy or the API), then above which volume each setup beats the API."""
    def c(key, name):
        return cells[(key, name)]
    api_month = cells.get("api_month", "serve_api_usd_per_month")  # an API of another model is no substitute
    month = {k: c(k, "serve_option_usd_per_month") for k in setups}

    def use_api(best: str) -> str:
        return (f'"Use the API: "&{cells["api"]}&" for "&{cells["volume"]}&", less than the cheapest setup, "&{c(best, "words")}'
                f'&" at "&{money_xl(month[best])}')
    if set(setups) == {"rent", "buy"}:
        r, b = month["rent"], month["buy"]
        head = (f'IF(AND({r}<={b},{r}<={api_month}),{c("rent", "lead")},IF({b}<={api_month},{c("buy", "lead")},'
                f'IF({b}<{r},{use_api("buy")},{use_api("rent")})))')
        # the leading setup's notes (load, queueing, one failure, weight format), as the sentence ends
        notes = (f'IF(AND({r}<={b},{r}<={api_month})," "&{c("rent", "notes")},IF({b}<={api_month}," "&{c("buy", "notes")},""))')
        wins = (f'{_upper_first_xl(c("rent", "wins"))}&"; "&{c("buy", "wins")}&"; "&IF({b}<{r},"buying costs less than renting",'
                f'"renting costs less than buying")&" at this demand"')
    else:
        (key,) = setups
        head = f'IF({month[key]}<={api_month},{c(key, "lead")},{use_api(key)})'
        wins = _upper_first_xl(c(key, "wins"))
        notes = f'IF({month[key]}<={api_month}," "&{c(key, "notes")},"")'
    return f'={head}&". "&{wins}&"."&{notes}'


def _serve_start(ws, tabs: Mapping, result: Mapping, setups: Mapping, cells: Mapping, lay: Layout) -> None:
    """Start: the serving question, the answer in one sentence, the setups against the API and the targets, and how
    old the numbers are."""
    ws["A1"] = "gpu-tco: serve a model: which GPUs, how many, rent, buy or use an API"
    ws["A1"].font = Font(bold=True, size=16)
    ws["A3"] = "The question"
    ws["A3"].font = Font(bold=True, size=12)
    values = result["inputs"]
    _note(ws, "A4", '="Serve "&model&" at "&TEXT(serve_demand_requests_per_s,"General")&" requests a second ("&prompt_tokens'
                    '&" prompt and "&output_tokens&" generated tokens each, "&hours_per_day&" hours a day), the first token '
                    'within "&ttft_slo_ms&" ms and "&tpot_slo_ms&" ms per token after it (0 = no target): rent, buy or use an API?"',
          "E", 34)
    lay.cached["Start!A4"] = (f"Serve {values['model']} at {result['demand']['requests_per_s']:g} requests a second "
                              f"({values['prompt_tokens']:g} prompt and {values['output_tokens']:g} generated tokens each, "
                              f"{values['hours_per_day']:g} hours a day), the first token within {values['ttft_slo_ms']:g} ms and "
                              f"{values['tpot_slo_ms']:g} ms per token after it (0 = no target): rent, buy or use an API?")
    ws["A6"] = "The answer"
    ws["A6"].font = Font(bold=True, size=12)
    # with no setup meeting the targets the answer is the API, as core words it when the file is written
    _note(ws, "A7", answer_xl(setups, cells) if setups else result["recommendation"], "E", 90, Font(bold=True, size=12))
    lay.cached["Start!A7"] = result["recommendation"]
    _note(ws, "A8", f"How the setups were chosen (when this file was written): {SERVE_RANKING}. The setups are on the "
                    "Serving sheet; the numbers follow Inputs (demand, targets, prices, the API).", "E", 45, NOTE_FONT)
    known = {"serve_api_usd_per_mtok_input": result["api"]["usd_per_mtok_input"], "api_model": values["api_model"],
             "serve_api_usd_per_mtok_output": result["api"]["usd_per_mtok_output"], "serve_api_usd_per_month": result["api"]["usd_per_month"],
             "ttft_slo_ms": values["ttft_slo_ms"], "tpot_slo_ms": values["tpot_slo_ms"], "as_of": result["api"]["as_of"]}
    r = _serve_table(ws, setups, cells, lay, 10, known)
    if result.get("launch"):
        ws.cell(row=r, column=1, value="Start one replica of the setup the answer names with (when this file was written)").font = Font(bold=True)
        for item in result["launch"]:
            r += 1
            put_text(ws.cell(row=r, column=1), item["command"])
            lay.cached[f"Start!A{r}"] = item["command"]
        r += 1
        # the note wraps across the table's width (an FP8 checkpoint's note runs to a few hundred characters)
        _note(ws, f"A{r}", result["launch"][0]["note"], "E", 15, NOTE_FONT)
        put_text(ws[f"A{r}"], result["launch"][0]["note"])  # text, never read as a formula
        r += 1
    r = _start_ages(ws, tabs, r + 1, str(result["given"].get("offer", "")))
    _widths(ws, {"A": 36, "B": 26, "C": 26, "D": 26, "E": 14})
    fit_heights(ws, lay.cached)
    page_setup(ws, f"A1:E{r}", fit_width=True)
    ws.page_setup.fitToHeight = 1  # one page: the answer, the setups against the API, and how old the numbers are


def _serve_table(ws, setups: Mapping, cells: Mapping, lay: Layout, r: int, known: Mapping) -> int:
    """From row r: the setups beside the API and the targets (``known``: their values when the file is written);
    returns the row after the table."""
    _head(ws, r, ["", *(WAYS[k][0] for k in setups), "the API", "target"], freeze=False)
    api_col = get_column_letter(2 + len(setups))
    lines = [("setup", "words", None, None, None), ("rent or buy", "acquire", None, None, None),
             ("cloud offer", "offer_shown", None, None, None), ("GPU", "gpu", None, None, None),
             ("GPUs per replica", "n_gpus", WHOLE, None, None),
             ("weight format", "weights_dtype", None, None, None), ("replicas", "serve_replicas", WHOLE, None, None),
             ("servers bought (whole servers)", "servers_shown", WHOLE, None, None),
             ("load of the replicas", "serve_load_fraction", "0%", None, None),
             ("requests decoded at once per replica", "serve_layout_batch", WHOLE, None, None),
             ("prefill and decode apart (disaggregated)", "layout_shown", None, None, None),
             ("serving engine", "engine_shown", None, None, None),
             ("time to first token at full load", "ttft_ms", MS, None, None),
             ("time to first token, likely range", "ttft_likely", None, None, None),
             ("queueing wait at the planned load", "ttft_queue_wait_ms", MS, None, None),
             ("time to first token at the planned load", "serve_ttft_at_load_ms", MS, None, "ttft_slo_ms"),
             ("time per generated token at full load", "tpot_ms", MS, None, "tpot_slo_ms"),
             ("time per generated token at the planned load", "serve_tpot_at_load_ms", MS, None, None),
             ("time per generated token, likely range", "tpot_likely", None, None, None),
             ("meets both targets", "meets", None, None, None),
             ("USD per million input tokens", "serve_{way}_usd_per_mtok_input", USD_MILLS, "serve_api_usd_per_mtok_input", None),
             ("USD per million output tokens", "serve_{way}_usd_per_mtok_output", USD_MILLS, "serve_api_usd_per_mtok_output", None),
             ("cost per month", "serve_option_usd_per_month", USD, "serve_api_usd_per_month", None),
             ("beats the API above (million tokens a month)", "serve_{way}_beats_api_mtok_per_month", NEVER, None, None)]
    for i, (label, name, fmt, api, target) in enumerate(lines, start=r + 1):
        ws.cell(row=i, column=1, value=label)
        for j, (key, option) in enumerate(setups.items()):
            formula, value = _table_cell(name, key, option, cells, lay)
            c = ws.cell(row=i, column=2 + j, value=formula)
            c.alignment = top_aligned("right", name in ("words", "offer_shown"))
            if fmt:
                c.number_format = fmt
            lay.cached[f"Start!{c.coordinate}"] = value
        if api:
            c = ws.cell(row=i, column=2 + len(setups), value=f"={api}")
            c.number_format = fmt
            lay.cached[f"Start!{c.coordinate}"] = float(known[api])
        if target:
            c = ws.cell(row=i, column=3 + len(setups), value=f"={target}")
            c.number_format = '[=0]"none";#,##0 "ms"'
            lay.cached[f"Start!{c.coordinate}"] = float(known[target])
    ws.row_dimensions[r + 1].height = 45
    i = r + len(lines) + 1
    ws.cell(row=i, column=1, value="the API compared with")
    ws[f"{api_col}{i}"] = "=api_model"
    lay.cached[f"Start!{api_col}{i}"] = str(known["api_model"])
    ws[f"{api_col}{i}"].alignment = top_aligned(wrap=True)
    ws.row_dimensions[i].height = 30
    ws.cell(row=i + 1, column=1, value="API prices as of")
    given = "AND(api_usd_per_mtok_input>0,api_usd_per_mtok_output>0)"
    ws[f"{api_col}{i + 1}"] = f'=IF({given},"the prices given on Inputs",INDEX(apis_as_of,MATCH(api_model,apis_name,0)))'
    lay.cached[f"Start!{api_col}{i + 1}"] = known["as_of"] or "the prices given on Inputs"
    return i + 2


def _table_cell(name: str, key: str, option, cells: Mapping, lay: Layout) -> tuple[str, object]:
    """A setup's cell of Start's table: (formula over the Serving sheet, the value it shows when written)."""
    def c(row):
        return cells[(key, row)]
    if name == "acquire":
        return f'=IF({c("buy")}=1,"buy","rent")', key
    if name == "offer_shown":
        return f'=IF({c("buy")}=1,"-",{c("offer")})', option.offer or "-"
    if name == "servers_shown":
        return f'=IF({c("buy")}=1,{c("serve_servers")},"-")', option.servers if option.acquire == "buy" else "-"
    if name == "meets":
        return f'=IF({c("serve_ok")},"yes","no")', "yes" if option.ok else "no"
    if name == "layout_shown":
        return (f'=IF({c("serve_disaggregated")},{c("disagg_prefill_replicas")}&" prefill + "&{c("disagg_decode_replicas")}'
                f'&" decode replicas","no")'), (f"{option.prefill_replicas} prefill + {option.decode_replicas} decode replicas"
                                                if option.layout == "disaggregated" else "no")
    if name == "engine_shown":
        return "=engine", option.engine
    if name in ("ttft_likely", "tpot_likely"):
        q = name.split("_")[0]
        fmt = '"#,##0"' if q == "ttft" else '"0.0"'
        low, high = (option.ttft_ms_likely if q == "ttft" else option.tpot_ms_likely)
        shown = f"{low:,.0f}-{high:,.0f} ms" if q == "ttft" else f"{low:.1f}-{high:.1f} ms"
        return (f'=TEXT({c(q + "_ms_likely_low")},{fmt})&"-"&TEXT({c(q + "_ms_likely_high")},{fmt})&" ms"', shown)
    ref = c(name.format(way=_way(key)))
    return "=" + ref, lay.cached.get(ref.replace("$", ""), "")


TRADEOFF_OUTPUTS = ("load_tokens_per_s_per_user", "load_output_tokens_per_s_per_gpu", "load_tpot_ms", "load_ttft_ms")


def _tradeoff_sheet(wb: Workbook, result: Mapping, lay: Layout) -> None:
    """Trade-off: the recommended setup (Inputs' GPU, GPUs per replica, weight format, engine) at each number of requests
    in flight whose KV cache fits: tokens per second each user sees against output tokens per second per GPU, live
    formulas over Inputs (``load_*`` quantities, closed loop), with a chart."""
    from openpyxl.chart import Reference, ScatterChart, Series
    best = result["recommended"]
    if best is None:
        return
    base = serve_option_inputs(result["given"], best)
    points = core.tradeoff_curve(base, tensor_parallel=[best.n_gpus])["points"]
    if not points:
        return
    ws = wb.create_sheet("Trade-off")
    moving = set(depending_on(("concurrency",)))
    per_point = [n for n in ancestors(list(TRADEOFF_OUTPUTS)) if n in moving]
    rows = {name: 3 + i for i, name in enumerate(["concurrency", *per_point])}
    # wrapped within A:H: a title overflowing to the right would reach the empty print area and print it
    _note(ws, "A1", f"Throughput per GPU against speed per user: {best.n_gpus}x {best.gpu} ({best.weights_dtype}) with the "
                    "engine on Inputs, each column a number of requests in flight (closed loop, as benchmarks run them)",
          "H", 32, Font(bold=True))
    _head(ws, 2, ["quantity", "unit", *(f"{p['concurrency']} in flight" for p in points)])
    for name, r in rows.items():
        ws.cell(row=r, column=1, value=name)
        unit = QUANTITIES[name].unit if name in QUANTITIES else BY_NAME[name].unit
        ws.cell(row=r, column=2, value="" if unit in ("-", "flag") else unit)
    for j, p in enumerate(points):
        col = get_column_letter(3 + j)

        def ref(name: str, col=col) -> str:
            return f"{col}{rows[name]}" if name in rows else name
        values = core.evaluate({**base, "concurrency": p["concurrency"], "max_num_seqs": p["concurrency"], "ttft_slo_ms": 0,
                                "tpot_slo_ms": 0}, outputs=per_point)
        c = ws[f"{col}{rows['concurrency']}"]
        c.value = p["concurrency"]
        c.fill, c.protection = INPUT_FILL, Protection(locked=False)
        lay.cached[f"Trade-off!{col}{rows['concurrency']}"] = p["concurrency"]
        for name in per_point:
            cell = ws[f"{col}{rows[name]}"]
            cell.value = "=" + QUANTITIES[name].expr.xl(ref)
            cell.number_format = _number_format(QUANTITIES[name].unit)
            lay.cached[f"Trade-off!{col}{rows[name]}"] = _plain(values[name])
    last = get_column_letter(2 + len(points))
    chart = ScatterChart()
    chart.title = "Output tokens/s per GPU against tokens/s per user"
    chart.x_axis.title, chart.y_axis.title = "tokens/s each user sees", "output tokens/s per GPU"
    chart.style = 13
    x = Reference(ws, min_col=3, max_col=2 + len(points), min_row=rows["load_tokens_per_s_per_user"])
    y = Reference(ws, min_col=3, max_col=2 + len(points), min_row=rows["load_output_tokens_per_s_per_gpu"])
    series = Series(y, x, title=f"{best.n_gpus}x {best.gpu}")
    series.marker.symbol = "circle"
    chart.series.append(series)
    ws.add_chart(chart, f"A{max(rows.values()) + 3}")
    _note(ws, f"A{max(rows.values()) + 2}", f"Columns C-{last}: change a yellow number of requests in flight to move its column; "
                                           "the engine, GPU and weight format are Inputs'. Latency ranges: docs/calibration.md.",
          "H", 30, NOTE_FONT)
    _widths(ws, {"A": 38, "B": 14})
    not_in_default_print(ws, 2 + len(points), title_rows="2:2")
    ws.protection.sheet = True
