"""Serving planner: the cheapest deployment that answers a demand within latency targets, against an API.

    >>> from gpu_tco.core import serve_plan
    >>> result = serve_plan({"model": "Llama-3-70B", "requests_per_s": 20, "prompt_tokens": 1000,
    ...                      "output_tokens": 200, "ttft_slo_ms": 2000, "tpot_slo_ms": 50})
    >>> result["recommended"].gpu, result["recommended"].replicas     # doctest: +SKIP
    >>> result["recommendation"]                                       # one sentence: rent, buy or use the API

What is searched: every GPU of the catalog x GPUs per replica (the tensor-parallel degree: 1, 2, 4, 8 up to the
GPU's largest server; one for MIG slices) x weight format the GPU runs well (bf16; fp8 where it has FP8 tensor
cores; int4 AWQ; NVFP4 where it has FP4) x (each priced rental offer that sells a replica, or buying).  For each,
the formula layer (``core/formulas.py`` group "serving", the same formulas the workbook and the Excel functions
use) gives the batch a replica runs within both targets, ``ttft_ms``, ``tpot_ms``, the requests per second a
replica sustains, the replicas the demand needs, and the monthly cost and cost per million input and output
tokens.  One vectorised ``evaluate`` call computes all options.

Ranking (``SERVE_RANKING``): options that fit and meet both targets with a price first; among those within
``cost_tolerance_pct`` of the cheapest monthly cost, fewer GPUs in all win, then the lower cost; the rest follow
by cost.  The answer compares the cheapest rented and the cheapest bought option with the API at the demand and
says above which monthly volume renting and owning beat the API.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Mapping

import numpy as np

from . import catalog, planner
from .engine import check_input, evaluate, release_weights_dtype, resolve_inputs, row_of
from .errors import InputError
from .inputs import BY_NAME
from .job_fit import serve_not_fit_text
from .planner import Record, planned_offers
from .recommendation import usd_text
from .text import upper_first
from .validation import context_note, heads_problem, number_list

TP_DEGREES = (1, 2, 4, 8)
# checked in this order; the first failing one is what a table shows
SERVE_REJECTIONS = (("serve_weights_allowed", "weights below the lowest bit width accepted"), ("serve_fits", "does not fit"), ("serve_meets_ttft", "first token too slow"),
                    ("serve_meets_tpot", "too slow per token"),
                    ("serve_meets_ttft_at_load", "first token too slow at the planned load"),
                    ("serve_ok", "no batch meets both targets"),
                    ("option_priced", "no price"), ("option_offer_allowed", "spot not allowed"),
                    ("option_offer_sells", "larger than the offer sells"))
SERVE_OUTPUTS = ("serve_batch", "ttft_ms", "tpot_ms", "serve_replica_requests_per_s", "serve_replicas", "serve_gpus",
                 "serve_option_usd_per_month", "serve_rent_usd_per_month", "serve_own_usd_per_month",
                 "serve_rent_usd_per_mtok_input", "serve_rent_usd_per_mtok_output", "serve_own_usd_per_mtok_input",
                 "serve_own_usd_per_mtok_output", "serve_rent_beats_api_mtok_per_month", "serve_own_beats_api_mtok_per_month",
                 "serve_api_usd_per_month", "serve_api_usd_per_mtok_input", "serve_api_usd_per_mtok_output",
                 "serve_mtok_per_month", "serve_demand_requests_per_s", "serve_load_fraction", "serve_kv_batch",
                 "serve_tpot_ms_at_batch_1", "serve_ttft_ms_at_batch_1", "infer_weights_gib", "gpu_memory_gib",
                 "serve_rent_usd_per_replica_month", "serve_own_usd_per_replica_month", "serve_replica_mtok_per_month",
                 "own_capital_usd", "rent_usd_per_gpu_hour", "own_usd_per_gpu_hour", "offer_max_gpus",
                 "serve_servers", "own_server_gpus", "own_gpus", "serve_idle_gpus", "serve_replicas_for_load",
                 "ttft_queue_wait_ms", "serve_ttft_at_load_ms", "serve_tpot_at_load_ms", "serve_slot_wait_ms", "serve_prefill_wait_ms",
                 "serve_load_after_failure", "serve_single_failure_stops", "serve_weights_allowed",
                 "serve_load_after_server_failure", "serve_planned_utilization",
                 "tpot_ms_likely_low", "tpot_ms_likely_high", "ttft_ms_likely_low", "ttft_ms_likely_high",
                 "serve_disaggregated", "serve_layout_reason_code", "serve_layout_batch", "disagg_prefill_replicas",
                 "disagg_decode_replicas", "disagg_kv_transfer_ms", "serve_aggregated_gpus", "disagg_gpus",
                 "disagg_kv_link_gb_per_s", "disagg_kv_link_code", "serve_lowered_utilization",
                 "serve_aggregated_output_tokens_per_s_per_gpu", "disagg_output_tokens_per_s_per_gpu",
                 *(flag for flag, _ in SERVE_REJECTIONS))
SERVE_RANKING = ("options that fit, meet both latency targets (the first token with its queueing wait at the planned load) and "
                 "have a price first; among those within cost_tolerance_pct of the cheapest monthly cost, fewer GPUs in all "
                 "(bought: the whole servers' GPUs), then the lower monthly cost; then the rest by monthly cost; ties go to the "
                 "option listed first (GPU catalog order, GPUs per replica, weight format, offer, renting first, smaller servers first)")
# inputs that name what the planner chooses: a job may fix them to narrow the search
CHOSEN = ("gpu", "n_gpus", "offer", "buy", "weights_dtype", "gpus_per_server")


@dataclass(eq=False)
class ServeOption(Record):
    """One way to serve the demand: ``replicas`` copies of ``n_gpus`` GPUs (tensor parallel) in ``weights_dtype``,
    rented through ``offer`` or bought.  Money in USD, latency in milliseconds, tokens in millions (Mtok).
    ``reasons`` says why an option is not acceptable.  Reads like a mapping too (``option["gpu"]``)."""
    gpu: str
    n_gpus: int                       # GPUs per replica (the tensor-parallel degree)
    weights_dtype: str
    acquire: str                      # "rent" or "buy"
    offer: str = ""                   # the rental offer ("" when buying)
    price_type: str = ""
    interruptible: bool = False
    order: int = 0
    replicas: int = 0
    gpus_total: int = 0
    batch: int = 0                    # sequences one replica decodes at once at full load
    ttft_ms: float = float("nan")     # time to the first token: service time (prefill and the steps it shares)
    tpot_ms: float = float("nan")     # time per output token at full load
    requests_per_s_per_replica: float = float("nan")
    load_fraction: float = float("nan")  # share of the deployment's capacity the demand uses
    usd_per_month: float = float("nan")  # the deployment, rented for the traffic hours or owned
    usd_per_mtok_input: float = float("nan")
    usd_per_mtok_output: float = float("nan")
    beats_api_above_mtok_per_month: float = float("nan")  # -1 = never
    usd_per_gpu_hour: float = float("nan")
    capital_usd: float = float("nan")  # buying: GPUs, servers and network of all replicas
    weights_gib_per_gpu: float = float("nan")
    servers: int = 0                  # buying: whole servers ordered (0 when renting)
    server_gpus: int = 0              # buying: GPUs per server (the catalog's server size)
    gpus_bought: int = 0              # buying: servers x GPUs per server (some may be idle)
    spare_replicas: int = 0           # replicas beyond those carrying the demand at the target utilization
    planned_utilization: float = float("nan")  # the target, or lower where queueing would break the first-token target
    ttft_queue_wait_ms: float = float("nan")  # wait for a slot and for the prefill ahead at the planned load
    ttft_at_load_ms: float = float("nan")     # first token at the planned load: service then + ttft_queue_wait_ms
    tpot_at_load_ms: float = float("nan")     # time per output token at the planned load (fewer sequences than the batch)
    load_after_failure: float = float("nan")  # demand / capacity with one replica down
    load_after_server_failure: float = float("nan")  # buying: demand / capacity with one server down (1e9: one server)
    single_failure_stops: bool = False        # one failed replica stops or overloads the service
    weights_bits: float = float("nan")
    accuracy_effect: str = ""         # the weight format's published accuracy effect (weight_dtypes catalog)
    ok: bool = False
    reasons: tuple = ()
    within_tolerance: bool = False
    engine: str = "vllm"              # the serving engine the latencies are for (engines catalog)
    tpot_ms_likely: tuple = ()        # (low, high) likely range of tpot_ms from the engine's calibration residuals
    ttft_ms_likely: tuple = ()        # (low, high) likely range of ttft_ms
    layout: str = "aggregated"        # "aggregated" (each replica prefills and decodes) or "disaggregated"
    prefill_replicas: int = 0         # disaggregated: replicas that only prefill (spare included)
    decode_replicas: int = 0          # disaggregated: replicas that only decode (spare included)
    kv_transfer_ms: float = float("nan")  # disaggregated: one prompt's KV cache from prefill to decode replica
    layout_reason: str = ""           # why this layout, in words (aggregated against disaggregated GPUs)
    kv_link_gb_per_s: float = float("nan")  # disaggregated: the link per GPU that carries the KV cache (GB/s)
    kv_link_code: int = 0             # which link that is (disagg_kv_link_code; KV_LINK_WORDS)
    lowered_utilization: float = float("nan")  # the load the answer states (serve_lowered_utilization)



def weight_bits(dtype: str) -> float:
    """Bits per weight of a weight format (weight_dtypes catalog bits_per_param: 4.25 for int4_awq, 16 for bf16)."""
    table = catalog.tables()["weight_dtypes"]
    return float(table.rows[table.find(dtype)]["bits_per_param"])


def accuracy_effect(dtype: str) -> str:
    """The published accuracy effect of a weight format (weight_dtypes catalog accuracy_effect, sources cited in it)."""
    table = catalog.tables()["weight_dtypes"]
    return str(table.rows[table.find(dtype)].get("accuracy_effect") or "")


def _formats(gpu_row: Mapping, wanted: str | None) -> list[str]:
    """Weight formats the GPU runs well: bf16; fp8 with FP8 tensor cores; int4 AWQ; NVFP4 with FP4 tensor cores (those
    below min_weight_bits are listed, rejected with the reason: ``serve_weights_allowed``)."""
    if wanted is not None:
        return [wanted]
    out = ["bf16"]
    if float(gpu_row.get("fp8_dense_tflops") or 0) > 0:
        out.append("fp8")
    out.append("int4_awq")
    if float(gpu_row.get("fp4_dense_tflops") or 0) > 0:
        out.append("nvfp4")
    return out  # formats below min_weight_bits are rejected by the formula layer (serve_weights_allowed), with the reason


def _server_sizes(gpu_row: Mapping, n: int, fixed: int | None) -> list[int]:
    """Servers a replica of ``n`` GPUs can be bought in: the catalog's server_sizes holding at least one replica (or the
    size the job fixes with gpus_per_server).  A MIG slice is not sold on its own: its server is the card's, holding
    cards x the slices one card splits into (7 of 1g, 3 of 2g, 2 of 3g, 1 of 7g)."""
    if fixed:
        return [fixed] if fixed >= n else []
    mig = catalog.mig_profile(gpu_row)
    if mig is not None:
        card = catalog.tables()["gpus"].row(mig[0])
        per_card = max(1, math.floor(1 / float(gpu_row.get("card_share") or 1) + 1e-6))
        return [size * per_card for size in catalog.server_sizes(card) if size * per_card >= n]
    return [size for size in catalog.server_sizes(gpu_row) if size >= n]


def _degrees(gpu_row: Mapping, fixed: int | None) -> list[int]:
    if fixed is not None:
        return [fixed]
    if "MIG" in str(gpu_row["name"]).upper():
        return [1]  # a MIG slice is not linked to another by NVLink
    top = max(catalog.server_sizes(gpu_row))
    return [d for d in TP_DEGREES if d <= max(top, 1)]


def cols_dtype(r: Mapping, j: int) -> str:
    return str(r["weights_dtype"][j])


def _reason(word: str, r: Mapping, j: int, base: Mapping) -> str:
    if word == "weights below the lowest bit width accepted":
        return (f"weights below the lowest bit width accepted: {cols_dtype(r, j)} has fewer than {base['min_weight_bits']:g} bits "
                f"(Lowest weight bit width accepted set to 4 allows 4-bit formats, at the accuracy cost the answer names)")
    if word == "does not fit":  # the words every door uses for a replica that does not fit (core.job_fit)
        return serve_not_fit_text(r["infer_weights_gib"][j], r["gpu_memory_gib"][j])
    if word == "first token too slow":
        return f"first token too slow: {r['serve_ttft_ms_at_batch_1'][j]:,.0f} ms alone > target {base['ttft_slo_ms']:g} ms"
    if word == "too slow per token":
        return f"too slow per token: {r['serve_tpot_ms_at_batch_1'][j]:,.1f} ms alone > target {base['tpot_slo_ms']:g} ms"
    if word == "first token too slow at the planned load":
        return (f"first token too slow at the planned load: {r['serve_ttft_at_load_ms'][j]:,.0f} ms with "
                f"{r['ttft_queue_wait_ms'][j]:,.0f} ms of queueing > target {base['ttft_slo_ms']:g} ms (a Target utilization "
                f"of the replicas below {base['target_utilization']:g} plans more replicas and less queueing)")
    if word == "no batch meets both targets":
        return "no batch meets both targets together"
    if word == "no price":
        return "no price: the offer has no rental price or the GPU no purchase price"
    if word == "spot not allowed":
        return "spot not allowed: an interruptible offer (set Allow interruptible (spot) offers to 1 to consider it)"
    return f"larger than the offer sells: at most {r['offer_max_gpus'][j]:,.0f} GPUs in one job"


def serve_plan(job: Mapping | None = None, gpus: list[str] | None = None, include_buy: bool = True,
               alike_kept: int | None = None) -> dict:
    """Plan a serving deployment for ``job`` and say whether to rent, buy or use the API.

    ``job``: inputs as for ``evaluate`` (names in ``INPUTS``), the serving ones being ``requests_per_s`` (or
    ``monthly_mtok``), ``prompt_tokens``, ``output_tokens``, ``ttft_slo_ms``, ``tpot_slo_ms`` (0 = no target),
    ``hours_per_day`` (hours of traffic), ``api_model`` (the API compared with; default: the cheapest API of the
    catalog serving this model or one of its architecture, ``api_for_model``) and the model; ``task`` may be given ("serve").
    A ``gpu``, ``n_gpus`` (GPUs per replica), ``weights_dtype``, ``offer`` or ``buy`` in the job narrows the search
    to it; ``gpus`` lists the GPU types to consider (default: the whole catalog); ``include_buy`` adds buying.

    Returns a dict:
      - ``options``: ``ServeOption`` records, ranked by ``SERVE_RANKING`` (acceptable ones first);
      - ``recommended``: the first option when acceptable, else None;
      - ``best_rent`` / ``best_buy``: the cheapest acceptable rented / bought option (or None);
      - ``api``: {"name", "as_of", "usd_per_month", "usd_per_mtok_input", "usd_per_mtok_output"} for the same tokens
        (the ``api_model`` row of the API price catalog, or the prices typed in ``api_usd_per_mtok_input``/``_output``);
      - ``choice``: "rent", "buy" or "api" (the cheapest way at the demand; "api" when no setup meets the targets);
      - ``rent_beats_api_mtok_per_month`` / ``buy_beats_api_mtok_per_month``: monthly tokens (prompt + generated,
        millions) above which the best rented / bought setup beats the API (-1 = never, None = no such option);
      - ``recommendation``: one sentence (rent, buy or use the API, and above which monthly volume each wins);
      - ``demand``: {"requests_per_s", "mtok_per_month"}; ``job``, ``inputs`` (resolved), ``rejected_counts``,
        ``ranking``, ``task`` ("serve");
      - ``offers_left_out``: offers that cost at least as much as ``alike_kept`` (default ALIKE_OFFERS_KEPT) offers
        alike (left out by ``core.planner.planned_offers``: none of their options could rank among that many).
    Formulas: core/formulas.py group "serving" (docs/quantities.md); costs are USD per month of traffic hours.
    """
    named_api = isinstance(job, Mapping) and "api_model" in job  # an API the user names is the one to weigh
    job, fixed, base = _serving_job(job, gpus)
    tabs = catalog.tables()
    cols = _serve_candidates(base, fixed, gpus, include_buy, alike_kept)
    offers_left_out = cols.pop("offers_left_out")
    options: list[ServeOption] = []
    if cols["gpu"]:
        r = evaluate({**job, "gpu": cols["gpu"], "n_gpus": np.array(cols["n_gpus"]), "weights_dtype": cols["weights_dtype"],
                      "offer": cols["offer"], "buy": np.array(cols["buy"]),
                      "gpus_per_server": np.array(cols["gpus_per_server"])}, outputs=SERVE_OUTPUTS)
        r = {k: np.broadcast_to(np.asarray(v), (len(cols["gpu"]),)).tolist() for k, v in r.items()}
        options = _serve_options(cols, r, base, tabs["offers"])
        first = {k: v[0] for k, v in r.items()}
    else:
        first = evaluate({**job, **fixed}, outputs=("serve_api_usd_per_month", "serve_api_usd_per_mtok_input",
                                                    "serve_api_usd_per_mtok_output", "serve_demand_requests_per_s",
                                                    "serve_mtok_per_month"))
    api = {"usd_per_month": float(first["serve_api_usd_per_month"]),
           "usd_per_mtok_input": float(first["serve_api_usd_per_mtok_input"]),
           "usd_per_mtok_output": float(first["serve_api_usd_per_mtok_output"]), **_api_name(base),
           "same_model": named_api or api_serves_model(base)}
    demand = {"requests_per_s": float(first["serve_demand_requests_per_s"]), "mtok_per_month": float(first["serve_mtok_per_month"])}
    ranked, near = _rank(options, float(base["cost_tolerance_pct"]))
    options = [replace(o, within_tolerance=True) if id(o) in near else o for o in ranked]
    result = {"task": "serve", "job": {k: base[k] for k in BY_NAME if k in job}, "inputs": base, "given": {**job, **fixed},
              "options": options, "api": api, "demand": demand, "ranking": SERVE_RANKING, **_serve_choice(options, api),
              "offers_left_out": offers_left_out}
    result["engine"] = engine_text(str(base["engine"]))
    lead = lead_option(result)
    result["launch"] = launch_commands(result["given"], lead) if lead is not None else []
    result["context_note"] = context_note(base, row_of(base, "model"))
    result["recommendation"] = serve_sentence(result)
    return result


def lead_option(result: Mapping):
    """The setup the answer leads with: the cheapest rented or bought one when that is the cheapest way at the demand
    (as ``serve_sentence`` words it), else the recommended one (None when no setup meets the targets)."""
    return {"rent": result.get("best_rent"), "buy": result.get("best_buy")}.get(result.get("choice")) or result.get("recommended")


def engine_text(engine: str) -> str:
    """The engine in words with why it is the default: "vLLM (the default: ...)"."""
    from .inputs import BY_NAME as inputs
    row = catalog.tables()["engines"].row(engine)
    label = str(row["label"])
    return label + (" (the default engine)" if engine == inputs["engine"].default else "")


LAUNCH_EQUIVALENTS = ("vllm", "sglang", "trtllm")
# engines built for NVIDIA GPUs only: TensorRT-LLM compiles CUDA kernels ([trtllm_serve]); on other GPUs no equivalent
NVIDIA_ONLY_ENGINES = ("trtllm",)


def launch_commands(job: Mapping, option: Mapping) -> list[dict]:
    """The commands that start ``option`` (one replica): its engine's first, then the vLLM, SGLang and TensorRT-LLM
    equivalents ({"engine", "command", "note"} each; ``core.launch.launch_command``)."""
    from .launch import launch_command
    inputs = serve_option_inputs(job, option)
    inputs["max_num_seqs"] = max(1, int(option["batch"]))
    used = resolve_inputs(inputs)
    engine = str(option.get("engine") or used["engine"])
    nvidia = str(row_of(used, "gpu")["vendor"]).strip().upper() == "NVIDIA"
    order = [engine] + [e for e in LAUNCH_EQUIVALENTS if e != engine and (nvidia or e not in NVIDIA_ONLY_ENGINES)]
    commands = [launch_command({**inputs, "engine": e}) for e in order]
    if _get(option, "layout") == "disaggregated":
        for c in commands:
            how = DISAGG_LAUNCH.get(c["engine"], "this engine has no disaggregated mode: use NVIDIA Dynamo or aggregated serving")
            c["note"] = f"prefill and decode apart ({option['prefill_replicas']} prefill, {option['decode_replicas']} decode " \
                        f"replicas): {how}; " + c["note"]
    return commands


# how each engine runs prefill and decode on separate replicas (flags from each project's documentation)
DISAGG_LAUNCH = {"vllm": "add --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}' to both "
                         "kinds and route requests prefill first (vLLM disaggregated prefill, or NVIDIA Dynamo)",
                 "sglang": "add --disaggregation-mode prefill to the prefill replicas and --disaggregation-mode decode to the "
                           "decode replicas, behind sglang-router with --pd-disaggregation",
                 "trtllm": "run context (prefill) and generation (decode) servers with trtllm-serve disaggregated, or NVIDIA Dynamo"}


def likely_text(value: float, likely) -> str:
    """"42 ms (likely 35-50)": a latency with its likely range, in milliseconds."""
    fmt = (lambda v: f"{v:,.0f}") if value >= 100 else (lambda v: f"{v:.1f}" if value < 10 else f"{v:.0f}")
    if not likely or not all(map(math.isfinite, likely)):
        return f"{fmt(value)} ms"
    return f"{fmt(value)} ms (likely {fmt(likely[0])}-{fmt(likely[1])})"


def _serving_job(job, gpus) -> tuple[dict, dict, dict]:
    """The serving job checked: (job without what the planner chooses, the choices it fixes, resolved inputs); the API
    compared with defaults to one serving this model (``api_for_model``).  An InputError names the argument otherwise."""
    if job is not None and not isinstance(job, Mapping):
        raise InputError("job", job, "must be a mapping of input names to values, e.g. {\"model\": \"Llama-3-70B\"}")
    if gpus is not None and not isinstance(gpus, str) and (
            not isinstance(gpus, (list, tuple)) or not all(isinstance(g, str) for g in gpus)):
        raise InputError("gpus", gpus, "must be a list of GPU names, e.g. [\"H100-SXM\", \"L40S\"]")
    job = dict(job or {})
    job["task"] = "serve"  # what is bought is the deployment (own_gpus), whatever task the caller's dict named
    fixed = {k: job.pop(k) for k in CHOSEN if k in job}
    named_format = release_weights_dtype(job.get("model"))
    if named_format is not None and "weights_dtype" not in fixed:  # "...-NVFP4", gpt-oss's MXFP4: that checkpoint is served
        fixed["weights_dtype"] = named_format
        if "min_weight_bits" not in job:
            # the checkpoint's own format is its published accuracy: the lowest bit width comes down to it (a format
            # the user names is still held to min_weight_bits, never lowered silently)
            bits = math.floor(weight_bits(check_input("weights_dtype", named_format)))
            if bits < float(BY_NAME["min_weight_bits"].default):
                job["min_weight_bits"] = bits
    # GPUs per replica are the planner's to choose: the check reads the smallest count attention data parallel divides
    size = {} if "n_gpus" in fixed else {"n_gpus": _attention_groups(job, fixed)}
    base = resolve_inputs({**job, **size, **fixed})  # checks every value once, with field names in messages
    if "api_model" not in job:  # compare with an API serving this model (or one of the same architecture)
        # (the model as given: a parameter count or a config file resolves to a name evaluate cannot read back)
        api = api_for_model(job.get("model", base["model"]), float(base["prompt_tokens"]), float(base["output_tokens"]))
        if api is not None:
            job["api_model"] = api
            base = resolve_inputs({**job, **size, **fixed})
    return job, fixed, base


def _attention_groups(job: Mapping, fixed: Mapping) -> int:
    """The GPUs per replica the job is checked at: 1, or with attention data parallel (``attention_dp`` > 1) the smallest
    replica size the planner weighs (TP_DEGREES, the GPU's servers) that the degree divides and the engines can split
    the model's heads over.  A degree that divides none of them is refused here, naming attention_dp (the replica size
    is the planner's to choose, so a message about n_gpus would name an input the user never gave)."""
    adp = job.get("attention_dp", 1)
    if adp is None or adp == 1 or "n_gpus" in fixed:
        return 1
    adp = check_input("attention_dp", adp)  # a bad value (text, NaN, 2.5, 0) is refused with the input's own rule
    if adp == 1:
        return 1
    # the model's (and a fixed GPU's) rows alone: the job's other inputs (a layout, a prompt) are checked with the job
    probe = resolve_inputs({**{k: v for k, v in {**job, **fixed}.items() if k in ("model", "gpu")}, "n_gpus": 1})
    model = row_of(probe, "model")
    degrees = _degrees(row_of(probe, "gpu"), None) if "gpu" in fixed else list(TP_DEGREES)
    sizes = [n for n in degrees if heads_problem(model, n) is None]
    fitting = [n for n in sizes if n % adp == 0]
    if fitting:
        return fitting[0]
    allowed = sorted({d for n in sizes for d in range(1, n + 1) if n % d == 0})
    where = f" of {probe['gpu']}" if "gpu" in fixed else ""
    raise InputError("attention_dp", adp, f"must divide the GPUs of a serving replica{where}, which the planner takes from "
                                          f"{', '.join(map(str, sizes))} (the sizes the engines split {probe['model']}'s "
                                          f"{int(model['heads'])} attention heads over); allowed: {', '.join(map(str, allowed))}")


def _serve_candidates(base: Mapping, fixed: Mapping, gpus, include_buy: bool, alike_kept: int | None = None) -> dict[str, list]:
    """Columns of the search: GPU x GPUs per replica x weight format x (each offer of the GPU, or buying)."""
    tabs = catalog.tables()
    gpu_table = tabs["gpus"]
    if "gpu" in fixed:
        gpu_names = [gpu_table.canonical(fixed["gpu"], "gpu")]
    elif gpus:
        gpu_names = list(dict.fromkeys(gpu_table.canonical(g, "gpu") for g in ([gpus] if isinstance(gpus, str) else gpus)))
    else:
        gpu_names = list(gpu_table.names)
    n_fixed = int(base["n_gpus"]) if "n_gpus" in fixed else None
    dtype_fixed = str(base["weights_dtype"]) if "weights_dtype" in fixed else None
    offer_fixed = None
    if "offer" in fixed and str(fixed["offer"]).strip().lower() != catalog.AUTO_OFFER:
        offer_fixed = tabs["offers"].resolve(fixed["offer"], "offer")
    buy_only = "buy" in fixed and bool(base["buy"])
    rent_only = "buy" in fixed and not bool(base["buy"])
    offers, left_out = planned_offers(alike_kept)
    model = row_of(base, "model")
    cols: dict[str, list] = {"gpu": [], "n_gpus": [], "weights_dtype": [], "offer": [], "buy": [], "gpus_per_server": []}
    server_fixed = int(base["gpus_per_server"]) if "gpus_per_server" in fixed else None
    for g in gpu_names:
        row_index = gpu_table.find(g)
        row = gpu_table.rows[row_index]
        mine = offers.get(row_index, [])
        if offer_fixed is not None:
            mine = [offer_fixed] if catalog.offer_gpu_rows()[offer_fixed] == row_index else []
        for n in _degrees(row, n_fixed):
            if n_fixed is None and heads_problem(model, n):
                continue  # a replica the engines cannot split the model's heads over (28 heads on 8 GPUs)
            if n % int(base["attention_dp"]):
                continue  # attention data-parallel groups split the replica's GPUs evenly
            for fmt in _formats(row, dtype_fixed):
                if not buy_only:
                    for off in mine:
                        for k, v in zip(cols, (g, n, fmt, tabs["offers"].names[off], 0, server_fixed or 0)):
                            cols[k].append(v)
                if include_buy and not rent_only and offer_fixed is None:
                    for size in _server_sizes(row, n, server_fixed):
                        for k, v in zip(cols, (g, n, fmt, catalog.AUTO_OFFER, 1, size)):
                            cols[k].append(v)
    # offers costing at least as much as ALIKE_OFFERS_KEPT offers alike (core.planner.planned_offers): how many were left out
    cols["offers_left_out"] = 0 if offer_fixed is not None or buy_only else \
        sum(left_out.get(gpu_table.find(g), 0) for g in gpu_names)
    return cols


def _serve_options(cols: Mapping, r: Mapping, base: Mapping, offer_table) -> list[ServeOption]:
    """One ``ServeOption`` per candidate of the sweep ``r``, with the reasons it is not acceptable.  Built column by
    column, each value converted once, then one record per row (the planner makes hundreds of options per plan)."""
    c = _option_columns(r)
    buy = list(map(bool, cols["buy"]))
    offer_index = offer_table.exact_names()  # {name: row}, built once per table
    offer_rows = [None if b else offer_table.rows[offer_index[o]] for b, o in zip(buy, cols["offer"])]
    reasons = _option_reasons(cols, r, base, c["serve_option_usd_per_month"])
    formats = {d: (weight_bits(d), accuracy_effect(d)) for d in dict.fromkeys(cols["weights_dtype"])}

    def own_or_rent(own: str, rent: str) -> list:
        return [o if b else t for b, o, t in zip(buy, c[own], c[rent])]

    def bought(name: str, kind, otherwise) -> list:  # (a rented option's value may be no number: converted when bought)
        return [kind(x) if b else otherwise for b, x in zip(buy, r[name])]

    nan = float("nan")
    by_field = {
        "gpu": cols["gpu"], "n_gpus": list(map(int, cols["n_gpus"])), "weights_dtype": cols["weights_dtype"],
        "acquire": ["buy" if b else "rent" for b in buy], "offer": ["" if b else o for b, o in zip(buy, cols["offer"])],
        "price_type": ["" if row is None else str(row["price_type"]) for row in offer_rows],
        "interruptible": [bool(row is not None and row["interruptible"]) for row in offer_rows], "order": range(len(buy)),
        "replicas": c["serve_replicas"], "gpus_total": c["serve_gpus"], "batch": c["serve_layout_batch"],
        "ttft_ms": c["ttft_ms"], "tpot_ms": c["tpot_ms"], "requests_per_s_per_replica": c["serve_replica_requests_per_s"],
        "load_fraction": c["serve_load_fraction"], "usd_per_month": c["serve_option_usd_per_month"],
        "usd_per_mtok_input": own_or_rent("serve_own_usd_per_mtok_input", "serve_rent_usd_per_mtok_input"),
        "usd_per_mtok_output": own_or_rent("serve_own_usd_per_mtok_output", "serve_rent_usd_per_mtok_output"),
        "beats_api_above_mtok_per_month": own_or_rent("serve_own_beats_api_mtok_per_month", "serve_rent_beats_api_mtok_per_month"),
        "usd_per_gpu_hour": own_or_rent("own_usd_per_gpu_hour", "rent_usd_per_gpu_hour"),
        "capital_usd": bought("own_capital_usd", float, nan),  # the whole deployment's
        "weights_gib_per_gpu": c["infer_weights_gib"], "servers": bought("serve_servers", int, 0),
        "server_gpus": bought("own_server_gpus", int, 0), "gpus_bought": bought("own_gpus", int, 0),
        "spare_replicas": [max(0, a - b) for a, b in zip(c["serve_replicas"], c["serve_replicas_for_load"])],
        "planned_utilization": c["serve_planned_utilization"], "ttft_queue_wait_ms": c["ttft_queue_wait_ms"],
        "ttft_at_load_ms": c["serve_ttft_at_load_ms"], "tpot_at_load_ms": c["serve_tpot_at_load_ms"],
        "load_after_failure": c["serve_load_after_failure"],
        "load_after_server_failure": bought("serve_load_after_server_failure", float, nan),
        "single_failure_stops": list(map(bool, r["serve_single_failure_stops"])),
        "weights_bits": [formats[d][0] for d in cols["weights_dtype"]],
        "accuracy_effect": [formats[d][1] for d in cols["weights_dtype"]],
        "ok": [not x for x in reasons], "reasons": reasons, "within_tolerance": [False] * len(buy),
        "engine": [str(base["engine"])] * len(buy),
        "tpot_ms_likely": list(zip(c["tpot_ms_likely_low"], c["tpot_ms_likely_high"])),
        "ttft_ms_likely": list(zip(c["ttft_ms_likely_low"], c["ttft_ms_likely_high"])),
        **_layout_columns(r, float(base["disaggregation_min_saving_pct"]))}
    return [ServeOption(*values) for values in zip(*(by_field[name] for name in _OPTION_FIELDS))]


def _option_reasons(cols: Mapping, r: Mapping, base: Mapping, costs: list[float]) -> list[tuple]:
    """Per option of the sweep ``r``, the reasons it is not acceptable (an empty tuple: acceptable)."""
    flags = [(r[flag], word) for flag, word in SERVE_REJECTIONS]
    with_dtypes = {**r, "weights_dtype": cols["weights_dtype"]}  # r with the weight formats, for the reasons' words
    texts: dict = {}  # a reason's words by what they say: options of one GPU, size and format share most
    out = []
    for j, cost in enumerate(costs):
        failing = [word for column, word in flags if not column[j]]
        if failing:
            out.append(tuple(_reason_kept(w, with_dtypes, j, base, texts) for w in _failing_shown(failing)))
        elif not math.isfinite(cost):
            out.append(("no price: the cost is not a finite number (check the price inputs)",))
        else:
            out.append(())
    return out


# the values each reason's words read, besides the job's (``_reason``); the others' words are fixed or name the format
_REASON_READS = {"does not fit": ("infer_weights_gib", "gpu_memory_gib"), "first token too slow": ("serve_ttft_ms_at_batch_1",),
                 "too slow per token": ("serve_tpot_ms_at_batch_1",),
                 "first token too slow at the planned load": ("serve_ttft_at_load_ms", "ttft_queue_wait_ms"),
                 "larger than the offer sells": ("offer_max_gpus",)}


def _reason_kept(word: str, r: Mapping, j: int, base: Mapping, texts: dict) -> str:
    """``_reason``, its words kept in ``texts`` by the values they read (not by a zero: 0.0 and -0.0 print apart)."""
    reads = _REASON_READS.get(word)
    if reads is None:
        return _reason(word, r, j, base)
    key = (word, *(r[name][j] for name in reads))
    if not all(key[1:]):
        return _reason(word, r, j, base)
    text = texts.get(key)
    if text is None:
        text = texts[key] = _reason(word, r, j, base)
    return text


# the sweep's outputs every option reads, as floats and as whole numbers (``_option_columns``)
_FLOAT_COLUMNS = ("serve_option_usd_per_month", "ttft_ms", "tpot_ms", "serve_replica_requests_per_s", "serve_load_fraction",
                  "serve_rent_usd_per_mtok_input", "serve_rent_usd_per_mtok_output", "serve_own_usd_per_mtok_input",
                  "serve_own_usd_per_mtok_output", "serve_rent_beats_api_mtok_per_month",
                  "serve_own_beats_api_mtok_per_month", "own_usd_per_gpu_hour", "rent_usd_per_gpu_hour", "infer_weights_gib",
                  "serve_planned_utilization", "ttft_queue_wait_ms", "serve_ttft_at_load_ms", "serve_tpot_at_load_ms", "serve_load_after_failure",
                  "tpot_ms_likely_low", "tpot_ms_likely_high", "ttft_ms_likely_low", "ttft_ms_likely_high")
_INT_COLUMNS = ("serve_replicas", "serve_gpus", "serve_layout_batch", "serve_replicas_for_load")


_OPTION_FIELDS = tuple(f.name for f in fields(ServeOption))  # ServeOption's arguments in order


def _option_columns(r: Mapping) -> dict[str, list]:
    """The columns of ``r`` every option reads, each converted once as ``_serve_options`` reads it."""
    columns = {name: list(map(float, r[name])) for name in _FLOAT_COLUMNS}
    columns.update({name: list(map(int, r[name])) for name in _INT_COLUMNS})
    return columns


def _failing_shown(failing: list[str]) -> list[str]:
    """The rejections an option's reasons name: a rule of the user's alone; latency or memory without what follows."""
    if "weights below the lowest bit width accepted" in failing:
        return ["weights below the lowest bit width accepted"]  # the user's rule: the rest does not matter
    if "does not fit" in failing or "first token too slow" in failing or "too slow per token" in failing:
        failing = [w for w in failing if w not in ("no batch meets both targets", "first token too slow at the planned load")]
    if "first token too slow at the planned load" in failing:
        failing = [w for w in failing if w != "no batch meets both targets"]
    return failing


# why the planner kept one layout, by serve_layout_reason_code
LAYOUT_REASONS = {1: "disaggregated prefill and decode: aggregated serving misses the targets",
                  2: "disaggregated prefill and decode: {dis} GPUs against {agg} aggregated",
                  3: "aggregated serving: {agg} GPUs, against {dis} with prefill and decode apart (chosen only when that saves at least {pct} %)",
                  4: "aggregated serving: prefill and decode apart would miss the targets",
                  5: "{layout} serving, as set (serving_layout)",
                  6: "aggregated serving: this engine does not run prefill and decode apart",
                  7: "aggregated serving: the offer states no network between its machines to carry the KV cache from "
                     "prefill to decode replicas (kv_transfer_gb_per_s sets one)",
                  8: "aggregated serving: consumer cards have no GPUDirect RDMA, so bought ones do not run prefill and decode "
                     "apart over a network (kv_transfer_gb_per_s sets a link for the KV cache)"}


def layout_reason_text(code: int, layout: str, agg_gpus: float, dis_gpus: float, min_saving_pct: float) -> str:
    """The layout and why, in words, from ``serve_layout_reason_code``, both layouts' GPUs and disaggregation_min_saving_pct."""
    return LAYOUT_REASONS.get(int(code), "{layout} serving").format(agg=f"{agg_gpus:,.0f}", dis=f"{dis_gpus:,.0f}", layout=layout,
                                                                    pct=f"{min_saving_pct:g}")


def _layout_columns(r: Mapping, min_saving_pct: float) -> dict[str, list]:
    """Per option of the sweep ``r``: its layout, prefill and decode replicas, KV transfer time and the layout's reason
    in words (written once per distinct reason: options of one GPU and size share them)."""
    said: dict = {}
    out: dict[str, list] = {"layout": [], "prefill_replicas": [], "decode_replicas": [], "kv_transfer_ms": [], "layout_reason": [],
                            "kv_link_gb_per_s": [float(x) for x in r["disagg_kv_link_gb_per_s"]],
                            "kv_link_code": [int(x) for x in r["disagg_kv_link_code"]],
                            "lowered_utilization": [float(x) for x in r["serve_lowered_utilization"]]}
    for disagg, code, agg, dis, pre, dec, kv in zip(
            r["serve_disaggregated"], r["serve_layout_reason_code"], r["serve_aggregated_gpus"], r["disagg_gpus"],
            r["disagg_prefill_replicas"], r["disagg_decode_replicas"], r["disagg_kv_transfer_ms"]):
        disagg = bool(disagg)
        layout = "disaggregated" if disagg else "aggregated"
        key = (int(code), layout, float(agg), float(dis))
        kept = key[2] and key[3]  # (not by a zero: 0.0 and -0.0 are one key but print apart)
        reason = said.get(key) if kept else None
        if reason is None:
            reason = layout_reason_text(*key, min_saving_pct)
            if kept:
                said[key] = reason
        out["layout"].append(layout)
        out["prefill_replicas"].append(int(pre) if disagg else 0)
        out["decode_replicas"].append(int(dec) if disagg else 0)
        out["kv_transfer_ms"].append(float(kv))
        out["layout_reason"].append(reason)
    return out


def _serve_choice(options: list, api: Mapping) -> dict:
    """The ranked options' verdict: recommended, best rented and bought, the cheapest way ("rent", "buy" or "api";
    ties in that order), the volumes above which each beats the API, and the count of each rejection reason."""
    counts: dict[str, int] = {}
    for o in options:
        for reason in o.reasons:
            key = reason.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
    best_rent = next((o for o in options if o.ok and o.acquire == "rent"), None)
    best_buy = next((o for o in options if o.ok and o.acquire == "buy"), None)
    # an API of another model is no substitute: it is named for scale, never chosen over a setup that meets the targets
    costs = {"api": api["usd_per_month"]} if api.get("same_model", True) or (best_rent is None and best_buy is None) else {}
    if best_rent is not None:
        costs["rent"] = best_rent.usd_per_month
    if best_buy is not None:
        costs["buy"] = best_buy.usd_per_month
    return {"recommended": options[0] if options and options[0].ok else None, "best_rent": best_rent, "best_buy": best_buy,
            "choice": min(costs, key=lambda k: (costs[k], ("rent", "buy", "api").index(k))),
            "rent_beats_api_mtok_per_month": best_rent.beats_api_above_mtok_per_month if best_rent else None,
            "buy_beats_api_mtok_per_month": best_buy.beats_api_above_mtok_per_month if best_buy else None,
            "rejected_counts": counts}


def plan(job: Mapping | None = None, gpus: list[str] | None = None, include_buy: bool | None = None, **scope) -> dict:
    """Plan ``job``: a serving deployment when its ``task`` is "serve" (``serve_plan``: ``gpus`` and
    ``include_buy`` apply), else a training job (``planner.plan``, with its scope: count, offer, price_gpu)."""
    if isinstance(job, Mapping) and "task" in job and check_input("task", job["task"]) == "serve":
        # the training planner's scope, read for a serving plan: a fixed count is the GPUs per replica, one offer
        # the offer rented; price_gpu is not needed (a price typed in the job belongs to the job's GPU)
        job = dict(job)
        if scope.get("count") is not None:
            job["n_gpus"] = scope["count"]
        if scope.get("offer") is not None:
            job["offer"] = scope["offer"]
        unknown = set(scope) - {"count", "offer", "price_gpu", "alike_kept"}
        if unknown:
            name = sorted(unknown)[0]
            raise InputError(name, scope[name], "is not a choice of a serving plan; name gpu, n_gpus, offer or buy in the job")
        return serve_plan(job, gpus=gpus, include_buy=True if include_buy is None else include_buy,
                          alike_kept=scope.get("alike_kept"))
    return planner.plan(job, gpus=gpus, include_buy=include_buy, **scope)


ARCHITECTURE = ("layers", "hidden", "ffn", "heads", "kv_heads", "experts", "active_experts", "vocab")


def api_for_model(model, prompt_tokens: float = 1000, output_tokens: float = 200) -> str | None:
    """The API offer to compare a model with: the cheapest (at this prompt/output mix) of the API catalog's rows
    serving this model, else one of the same architecture (Llama 3.3 70B for Llama 3 70B), else one serving the
    open-weight model of the catalog nearest in size (``_nearest_served_model``: Llama 3.1 8B for Qwen3 8B or for a model
    given as 8 billion parameters; the answer still says it serves another model), else None."""
    tabs = catalog.tables()
    models, apis = tabs["models"], tabs["apis"]
    candidates = []
    if isinstance(model, str) and models.find(model) is not None:  # (a parameter count, a config file, fields: by size)
        mine = models.row(model)
        candidates = [row for row in apis.rows if row.get("catalog_model") == mine["name"]]
        if not candidates:
            same = {r["name"] for r in models.rows if all(r[f] == mine[f] for f in ARCHITECTURE)}
            candidates = [row for row in apis.rows if row.get("catalog_model") in same]
    if not candidates:
        nearest = _nearest_served_model(model, {str(row["catalog_model"]) for row in apis.rows
                                                if models.find(str(row.get("catalog_model") or "")) is not None})
        candidates = [row for row in apis.rows if row.get("catalog_model") == nearest]
    if not candidates:
        return None
    price = lambda row: prompt_tokens * row["usd_per_mtok_input"] + output_tokens * row["usd_per_mtok_output"]  # noqa: E731
    return str(min(candidates, key=price)["name"])


def _nearest_served_model(model: str, served: set[str]) -> str | None:
    """Of the catalog models an API serves, the one nearest ``model`` in size: the least |ln(total parameters ratio)|
    + |ln(active parameters ratio)| (what serving it takes: memory for all weights, compute for the active ones), so
    a small model is compared with a small model's API and a mixture of experts with one of like active size."""
    if not served:
        return None
    names = sorted(served)
    try:
        mine = evaluate({"model": model}, outputs=("params_total_b", "params_active_b"))
    except InputError:
        return None
    sizes = evaluate({"model": names}, outputs=("params_total_b", "params_active_b"))
    distance = (np.abs(np.log(np.asarray(sizes["params_total_b"], dtype=float) / float(mine["params_total_b"])))
                + np.abs(np.log(np.asarray(sizes["params_active_b"], dtype=float) / float(mine["params_active_b"]))))
    return names[int(np.argmin(distance))]


def api_serves_model(inputs: Mapping) -> bool:
    """Whether the API a serving plan compares with serves the plan's model (its catalog model, or one of the same
    architecture), or its prices are typed in (the user's API for this model).  An API of another model is no
    substitute for serving this one."""
    if float(inputs["api_usd_per_mtok_input"]) > 0 and float(inputs["api_usd_per_mtok_output"]) > 0:
        return True
    tabs = catalog.tables()
    models, apis = tabs["models"], tabs["apis"]
    served = str(apis.rows[apis.find(inputs["api_model"])].get("catalog_model") or "")
    mine = row_of(inputs, "model")
    if served == str(mine.get("name", "")):
        return True
    if models.find(served) is None:
        return False
    other = models.row(served)
    return all(other[f] == mine.get(f) for f in ARCHITECTURE)


def _api_name(inputs: Mapping) -> dict:
    """The API compared with: its catalog name and date, or "the prices given" when both prices are typed in."""
    if float(inputs["api_usd_per_mtok_input"]) > 0 and float(inputs["api_usd_per_mtok_output"]) > 0:
        return {"name": "at the prices given", "as_of": ""}
    row = catalog.tables()["apis"].rows[catalog.tables()["apis"].find(inputs["api_model"])]
    return {"name": str(row["name"]), "as_of": str(row["as_of"])}


def serve_option_inputs(job: Mapping, option: Mapping) -> dict:
    """The inputs of one serving option: the job with its GPU, GPUs per replica, weight format, offer and rent or buy."""
    buy = option["acquire"] == "buy"
    out = dict(job)
    out.update(task="serve", gpu=option["gpu"], n_gpus=option["n_gpus"], weights_dtype=option["weights_dtype"],
               offer=catalog.AUTO_OFFER if buy else option["offer"], buy=1 if buy else 0)
    if buy and int(_get(option, "server_gpus", 0) or 0) > 0:
        out["gpus_per_server"] = int(_get(option, "server_gpus", 0))
    return out


def _get(option, key, default=None):
    try:
        return option[key]
    except (KeyError, IndexError, TypeError):
        return default


CURVE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def serve_curves(job: Mapping, option: Mapping, batches=None, volumes_mtok=None) -> dict:
    """What a chart of one serving option shows, from the serving formulas (one vectorised evaluate each):

    - ``latency``: {"batch", "tpot_ms", "ttft_ms", "output_tokens_per_s"} for the replica at each batch of
      ``batches`` (default CURVE_BATCHES up to the most its KV cache holds): time per output token, time to the first
      token and generated tokens per second of one replica when it runs that many sequences (no latency targets);
    - ``cost``: {"mtok_per_month", "rent_usd_per_mtok", "buy_usd_per_mtok", "api_usd_per_mtok"} at each monthly
      volume of ``volumes_mtok`` (prompt + generated, millions; default 1 to 1,000,000 in steps of x10^0.25): cost per
      million tokens of renting and of buying enough replicas for the volume (whole replicas), and of the API.
    ``option``: a ``ServeOption`` (or a mapping with gpu, n_gpus, weights_dtype, acquire, offer); ``job`` as for
    ``serve_plan`` (the plan's ``result["given"]``)."""
    base = serve_option_inputs(job, option)
    base["serving_layout"] = 2 if _get(option, "layout") == "disaggregated" else 1  # the curve of the option's replicas
    kv = int(evaluate(base, outputs=("serve_kv_batch",))["serve_kv_batch"])
    if batches is None:
        batches = [b for b in CURVE_BATCHES if b <= max(kv, 1)]
    batches = number_list("batches", batches, "batch sizes of at least 1, e.g. [1, 8, 64]")
    lat = evaluate({**base, "max_num_seqs": batches, "ttft_slo_ms": 0, "tpot_slo_ms": 0},
                   outputs=("tpot_ms", "ttft_ms", "serve_replica_output_tokens_per_s", "serve_batch"))
    volumes = number_list("volumes_mtok", volumes_mtok if volumes_mtok is not None else (10 ** np.arange(0, 6.01, 0.25)).tolist(),
                          "monthly volumes above 0 (million tokens), e.g. [1, 10, 100]", above_zero=True)
    names = ("serve_rent_usd_per_month", "serve_own_usd_per_month", "serve_api_usd_per_month", "serve_mtok_per_month")
    rent = evaluate({**base, "monthly_mtok": volumes, "buy": 0}, outputs=names)
    own = evaluate({**base, "monthly_mtok": volumes, "buy": 1, "offer": catalog.AUTO_OFFER}, outputs=names)
    per = lambda usd: (np.asarray(usd, dtype=float) / volumes).tolist()  # noqa: E731
    return {"latency": {"batch": np.asarray(lat["serve_batch"], dtype=float).tolist(),
                        "tpot_ms": np.asarray(lat["tpot_ms"], dtype=float).tolist(),
                        "ttft_ms": np.asarray(lat["ttft_ms"], dtype=float).tolist(),
                        "output_tokens_per_s": np.asarray(lat["serve_replica_output_tokens_per_s"], dtype=float).tolist()},
            "cost": {"mtok_per_month": volumes.tolist(), "rent_usd_per_mtok": per(rent["serve_rent_usd_per_month"]),
                     "buy_usd_per_mtok": per(own["serve_own_usd_per_month"]),
                     "api_usd_per_mtok": per(rent["serve_api_usd_per_month"])}}


def _rank(options: list, tolerance_pct: float):
    ok = [o for o in options if o.ok]
    cheapest = min((o.usd_per_month for o in ok), default=float("inf"))
    near = {id(o) for o in ok if o.usd_per_month <= cheapest * (1 + tolerance_pct / 100)}

    def key(o):
        if id(o) in near:
            return (0, o.gpus_bought if o.acquire == "buy" else o.gpus_total, round(o.usd_per_month, 6), o.order)
        return (1 if o.ok else 2, o.usd_per_month if o.ok and math.isfinite(o.usd_per_month) else 0.0, 0, o.order)
    return sorted(options, key=key), near


def serve_option_text(o: Mapping) -> str:
    """An option in words: "rent 2 replicas of 8x H100-SXM (fp8) from Lambda 8x H100 SXM (on-demand)"."""
    setup = f"{o['n_gpus']}x {o['gpu']} ({o['weights_dtype']})"
    if _get(o, "layout", "aggregated") == "disaggregated":
        setup = f"{o['prefill_replicas']} prefill and {o['decode_replicas']} decode replicas of {setup}"
    elif o["replicas"] != 1:
        setup = f"{o['replicas']} replicas of {setup}"
    if o["acquire"] == "buy":
        servers, size = int(_get(o, "servers", 0) or 0), int(_get(o, "server_gpus", 0) or 0)
        if servers > 0 and size > 0:
            return f"buy {servers} {'server' if servers == 1 else 'servers'} of {size}x {o['gpu']} holding {setup}"
        return f"buy {setup}"
    return f"rent {setup} from {o['offer']} ({o['price_type']})"


# what a serving figure of a setup that meets no target shows instead of a cost (it serves nothing: none, not $0)
SERVES_NOTHING = "none: this setup meets no target"


# NVIDIA, "License For Customer Use of NVIDIA GeForce Software", section 2.1.3 "No Datacenter Deployment",
# https://www.nvidia.com/en-us/drivers/geforce-license/ (the serving workbook writes the same words as a formula)
# what to do when the API compared with serves another model, in the inputs' labels (the workbook's sentence uses it too)
API_OTHER_MODEL_HINT = ("(choose one that serves it under \"API to compare with\", or give your own prices per million input "
                        "and output tokens)")
SERVE_CONSUMER_LICENSE = planner.GEFORCE_LICENSE
# what keeps a fleet up when one replica fails, named by the input's label (the serving workbook's sentence uses it too)
SPARE_REPLICA_HINT = "(Spare replicas set to 1 keeps it up)"


# which link carries a disaggregated option's KV cache, in words, by disagg_kv_link_code (1, 2, 3)
KV_LINK_WORDS = {1: "as KV transfer GB/s per GPU on the inputs sets it",
                 2: "the network between your servers, as Network between owned servers on the inputs sets it",
                 3: "the offer's network between its machines"}


def serve_option_notes(o: Mapping, inputs: Mapping) -> str:
    """What an engineer checks before signing a serving setup, in words: the load it runs at, the first token with its
    queueing wait, what one failure does, and the accuracy cost of a weight format below 8 bits."""
    target = float(inputs["target_utilization"])
    apart = _get(o, "layout") == "disaggregated"
    planned = float(_get(o, "lowered_utilization", target))
    lowered = (f", {'the prefill replicas ' if apart else ''}lowered to {planned:.0%} for the first-token target"
               if planned < target else "")
    notes = [f"planned at {o['load_fraction']:.0%} load (target utilization {target:.0%}{lowered}, "
             f"{o['spare_replicas']} spare {'replica' if o['spare_replicas'] == 1 else 'replicas'}); first token in "
             f"{o['ttft_at_load_ms']:,.0f} ms with {o['ttft_queue_wait_ms']:,.0f} ms of queueing (Poisson arrivals: M/M/c for a "
             f"sequence slot, M/D/1 for the prefill ahead)"]
    if _get(o, "layout_reason"):
        kv = float(_get(o, "kv_transfer_ms", float("nan")))
        link = float(_get(o, "kv_link_gb_per_s", float("nan")))
        words = KV_LINK_WORDS.get(int(_get(o, "kv_link_code", 0)))
        over = f" over {link * 8:,.0f} Gbit/s per GPU ({words})" if words and math.isfinite(link) and link > 0 else ""
        moved = f", each prompt's KV cache sent in {kv:,.1f} ms{over}" if apart and math.isfinite(kv) else ""
        notes.append(f"layout: {o['layout_reason']}{moved}")
    if o["single_failure_stops"]:
        notes.append("one failure stops the service: a single replica" if o["replicas"] <= 1 else
                     f"one failure overloads the service: the other replicas would run at {o['load_after_failure']:.0%} "
                     f"{SPARE_REPLICA_HINT}")
    else:
        notes.append(f"one failed replica leaves the rest at {o['load_after_failure']:.0%} load")
    if o["acquire"] == "buy" and int(_get(o, "servers", 0) or 0) > 0:
        after = float(_get(o, "load_after_server_failure", float("nan")))
        notes.append("one server failure stops the service: every replica is in one server" if o["servers"] <= 1 else
                     f"one server failure overloads the service: the rest would run at {after:.0%}" if after > 1 else
                     f"one failed server leaves the rest at {after:.0%} load")
    if o["acquire"] == "buy" and int(_get(o, "gpus_bought", 0) or 0) > o["gpus_total"]:
        free = o['gpus_bought'] - o['gpus_total']
        notes.append(f"{free} of the {o['gpus_bought']} GPUs bought {'is' if free == 1 else 'are'} free for other work")
    if o["acquire"] == "buy" and planner.consumer_gpu(str(o["gpu"])):
        notes.append(SERVE_CONSUMER_LICENSE.format(gpu=o["gpu"]))
    released = release_weights_dtype(inputs.get("model"))
    if o["weights_dtype"] == released and o["weights_bits"] < 16:
        notes.append(f"weights in {o['weights_dtype']} ({o['weights_bits']:g} bits), the format the model was released in: "
                     "its published accuracy")
    elif o["weights_bits"] < 8:
        notes.append(f"weights in {o['weights_dtype']} ({o['weights_bits']:g} bits): accuracy {o['accuracy_effect'] or 'not published'}")
    return "; ".join(notes)


def ms_text(ms: float) -> str:
    """Milliseconds as the answers write them: a tenth below 10 ms ("4.2"), whole ones above ("1,085")."""
    return f"{ms:.1f}" if ms < 10 else f"{ms:,.0f}"


def _volume(mtok: float | None) -> str:
    return f"{mtok:,.0f} million tokens a month" if mtok is not None and mtok >= 0 else ""


def serve_sentence(result: Mapping) -> str:
    """The answer in words: rent, buy or use the API at the demand, and above which monthly volume each wins."""
    api, demand = result["api"], result["demand"]
    rent, buy = result["best_rent"], result["best_buy"]
    # the hours of traffic a day priced (rented GPUs released off-hours): a 24-hour service says 24 (hours_per_day)
    volume = (f"{demand['mtok_per_month']:,.0f} million tokens a month ({demand['requests_per_s']:g} requests/s for "
              f"{float(result['inputs']['hours_per_day']):g} h a day)")
    dated = f", prices as of {api['as_of']}" if api.get("as_of") else ""
    api_text = f"the API {api['name']} (${api['usd_per_mtok_input']:g} input, ${api['usd_per_mtok_output']:g} output per " \
               f"million tokens{dated}) costs {usd_text(api['usd_per_month'])} a month"
    if not api.get("same_model", True):
        served = catalog.tables()["apis"].rows[catalog.tables()["apis"].find(result["inputs"]["api_model"])].get("catalog_model")
        api_text += (f", though it serves another model{f' ({served})' if served else ''}: no API in the catalog serves "
                     f"{result['inputs']['model']} {API_OTHER_MODEL_HINT}")
    if rent is None and buy is None:
        if not result.get("options"):  # nothing to compare: say why, never "rejected: none" with 0 of 0 options
            return (f"Use the API: no setup to compare: no priced rental offer sells the GPUs asked for, and buying was "
                    f"left out (allow buying, or name a GPU an offer rents); {api_text} for {volume}.") + _context_sentence(result)
        counts = ", ".join(f"{k} {v}" for k, v in result["rejected_counts"].items()) or "none"
        return f"Use the API: no setup meets the targets (rejected: {counts}); {api_text} for {volume}." + _context_sentence(result)
    lead = {"rent": rent, "buy": buy}.get(result["choice"])
    if lead is None:
        head = f"Use the API: {api_text} for {volume}"
        best = min((o for o in (rent, buy) if o is not None), key=lambda o: o.usd_per_month)
        head += f", less than the cheapest setup, {serve_option_text(best)} at {usd_text(best.usd_per_month)}"
    else:
        capital = f" ({usd_text(lead.capital_usd)} of capital)" if lead.acquire == "buy" and math.isfinite(lead.capital_usd) else ""
        head = (f"{upper_first(serve_option_text(lead))}{capital} with {result.get('engine') or lead.engine}: "
                f"{likely_text(lead.tpot_ms, lead.tpot_ms_likely)} per token, first token in "
                f"{likely_text(lead.ttft_ms, lead.ttft_ms_likely)} at full load (a batch of {lead.batch}); at the planned load "
                f"{ms_text(lead.tpot_at_load_ms)} ms per token, first token in {ms_text(lead.ttft_at_load_ms)} ms with the queue, "
                f"{usd_text(lead.usd_per_month)} a month (${lead.usd_per_mtok_input:.2f} per million input and "
                f"${lead.usd_per_mtok_output:.2f} per million output tokens) for {volume}; {api_text}")
    wins = []
    for word, o in (("renting", rent), ("buying", buy)):
        if o is None:
            continue
        above = o.beats_api_above_mtok_per_month
        wins.append(f"{word} beats the API above {_volume(above)}" if above >= 0 else f"{word} never beats the API at these prices")
    if rent is not None and buy is not None:
        cheaper, dearer = ("buying", "renting") if buy.usd_per_month < rent.usd_per_month else ("renting", "buying")
        wins.append(f"{cheaper} costs less than {dearer} at this demand")
    text = head + ". " + upper_first("; ".join(wins)) + "."
    if lead is not None:
        text += " " + upper_first(serve_option_notes(lead, result["inputs"])) + "."
    return text + _context_sentence(result)


def _context_sentence(result: Mapping) -> str:
    """" A request of ... is longer than the ... tokens assumed ...": the context note, as a sentence to append."""
    note = result.get("context_note")
    return f" {note}." if note else ""



CURVE_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def tradeoff_curve(job: Mapping, concurrencies=None, tensor_parallel=None) -> dict:
    """Throughput per GPU against tokens per second per user for a model, GPU and engine: the trade-off serving is
    tuned on (each point a closed-loop load of ``concurrency`` requests on one replica of ``n_gpus`` GPUs).

    ``job``: inputs as for ``evaluate`` (model, gpu, engine, weights_dtype, kv_dtype, prompt_tokens, output_tokens ...);
    ``tensor_parallel``: the GPUs per replica to draw (default: the job's n_gpus when it names one, else 1, 2, 4, 8 up
    to the GPU's server); ``concurrencies``: default CURVE_CONCURRENCIES.  Points whose KV cache does not fit are left
    out.  Returns {"model", "gpu", "engine", "weights_dtype", "points": [{"n_gpus", "concurrency",
    "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "tpot_ms", "ttft_ms", "best"}]}; ``best`` marks the points no
    other point beats on both axes.  Formulas: load_tokens_per_s_per_user, load_output_tokens_per_s_per_gpu."""
    job = dict(job)
    job["task"] = "serve"
    base = resolve_inputs(job)
    gpu_row = catalog.tables()["gpus"].row(base["gpu"])
    degrees = ([int(t) for t in tensor_parallel] if tensor_parallel is not None
               else [int(base["n_gpus"])] if "n_gpus" in job else _degrees(gpu_row, None))
    concs = [int(c) for c in (concurrencies if concurrencies is not None else CURVE_CONCURRENCIES)]
    if not concs or min(concs) < 1:
        raise InputError("concurrencies", concs, "must be whole numbers of requests in flight, at least 1")
    cols_n = [d for d in degrees for _ in concs]
    cols_c = [c for _ in degrees for c in concs]
    r = evaluate({**job, "n_gpus": np.array(cols_n), "concurrency": np.array(cols_c), "max_num_seqs": np.array(cols_c),
                  "ttft_slo_ms": 0, "tpot_slo_ms": 0},
                 outputs=("load_tokens_per_s_per_user", "load_output_tokens_per_s_per_gpu", "load_tpot_ms", "load_ttft_ms",
                          "serve_kv_batch"))
    r = {k: np.broadcast_to(np.asarray(v, dtype=float), (len(cols_n),)) for k, v in r.items()}
    points = [{"n_gpus": n, "concurrency": c, "tokens_per_s_per_user": float(r["load_tokens_per_s_per_user"][j]),
               "output_tokens_per_s_per_gpu": float(r["load_output_tokens_per_s_per_gpu"][j]),
               "tpot_ms": float(r["load_tpot_ms"][j]), "ttft_ms": float(r["load_ttft_ms"][j])}
              for j, (n, c) in enumerate(zip(cols_n, cols_c)) if r["serve_kv_batch"][j] >= c]
    for p in points:
        p["best"] = not any(q["tokens_per_s_per_user"] >= p["tokens_per_s_per_user"]
                            and q["output_tokens_per_s_per_gpu"] >= p["output_tokens_per_s_per_gpu"] and q is not p
                            and (q["tokens_per_s_per_user"] > p["tokens_per_s_per_user"]
                                 or q["output_tokens_per_s_per_gpu"] > p["output_tokens_per_s_per_gpu"]) for q in points)
    return {"model": str(base["model"]), "gpu": str(base["gpu"]), "engine": str(base["engine"]),
            "weights_dtype": str(base["weights_dtype"]), "points": points}
