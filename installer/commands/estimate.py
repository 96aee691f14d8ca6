"""``gpu-tco estimate``: memory, GPU count and time of one configuration (training or serving)."""
from __future__ import annotations

import json
import sys

from ..core import INPUTS, InputError, cite, engine_text, number_text, packed_documents_text, significant_text
from .common import _collect_inputs, _jsonable, _money, table

# the two memory views, named so nobody adds the allocator peak to the parts
MEMORY_ROW = {"allocator_peak": "allocator peak (PyTorch max_memory_allocated)", "total": "device total (must fit; nvidia-smi)"}


DEMAND_INPUTS = ("requests_per_s", "monthly_mtok")


def serving_demand_given(given: dict) -> bool:
    """Whether the user gave a serving demand (a request rate or a monthly volume): only then is a serving cost shown."""
    return any(k in given for k in DEMAND_INPUTS)


def _plan_differs(ns, given: dict, used: dict, res: dict) -> str:
    """One line: what `gpu-tco plan --task serve` recommends for the same inputs, and what it chose differently from this
    estimate (GPU, GPUs per replica, weight format, batch, rent or buy)."""
    from ..core import SERVE_CHOSEN, serve_option_text, serve_plan
    job = {k: v for k, v in given.items() if k not in SERVE_CHOSEN}
    job["task"] = "serve"
    plan = serve_plan(job, gpus=getattr(ns, "scenario_gpus", None))
    rec = plan["recommended"]
    if rec is None:
        return "gpu-tco plan on the same demand finds no setup meeting the targets: " + plan["recommendation"]
    diffs = []
    if rec.gpu != used["gpu"]:
        diffs.append(f"GPU {rec.gpu} instead of {used['gpu']}")
    if rec.n_gpus != int(used["n_gpus"]):
        diffs.append(f"{rec.n_gpus} {'GPU' if rec.n_gpus == 1 else 'GPUs'} per replica instead of {int(used['n_gpus'])}")
    if rec.weights_dtype != used["weights_dtype"]:
        diffs.append(f"weights {rec.weights_dtype} instead of {used['weights_dtype']}")
    if rec.acquire == "rent" and rec.offer != used["offer"]:
        diffs.append(f"the offer {rec.offer} instead of {used['offer']}")
    elif rec.acquire == "buy" and int(used["buy"]) == 0:
        diffs.append("buying instead of renting")
    if rec.batch != int(res["serve_layout_batch"]):
        diffs.append(f"batch {rec.batch} instead of {int(res['serve_layout_batch'])}")
    what = "; it chooses " + ", ".join(diffs) if diffs else "; the same GPU, GPUs per replica, format and batch"
    return (f"gpu-tco plan on the same demand recommends: {serve_option_text(rec)} at {_money(rec.usd_per_month)} a month"
            f"{what} (this estimate keeps the GPU, count, format and offer given, or their defaults).")


def _estimate_serving(ns, given: dict, used: dict, res: dict) -> tuple[list, list]:
    """estimate --mode infer's serving block: (the table's rows, the notes below it) for the demand given; no rows and
    a note saying so when no demand was given (a serving cost is shown only for a demand the user gave)."""
    n = number_text
    if not serving_demand_given(given):
        return [], ["Serving cost: no demand given (requests_per_s or monthly_mtok), so none is shown; "
                    "gpu-tco plan --task serve --requests-per-s N plans a deployment for a demand."]
    shown = [("meets the targets", "serve_ok"), ("batch per replica at full load", "serve_layout_batch"),
             ("utilization planned", "serve_lowered_utilization"),
             ("time to first token at full load (ms)", "ttft_ms"), ("queueing wait at the planned load (ms)", "ttft_queue_wait_ms"),
             ("time to first token at the planned load (ms)", "serve_ttft_at_load_ms"),
             ("time per output token at the planned load (ms)", "serve_tpot_at_load_ms"),
             ("time per output token at full load (ms)", "tpot_ms"),
             ("prefill and decode on separate replicas (disaggregated)", "serve_disaggregated"),
             ("prefill replicas if disaggregated", "disagg_prefill_replicas"),
             ("decode replicas if disaggregated", "disagg_decode_replicas"),
             ("KV cache sent per prompt if disaggregated (ms)", "disagg_kv_transfer_ms"),
             ("requests/s per replica", "serve_replica_requests_per_s"), ("replicas", "serve_replicas"),
             ("load of the replicas", "serve_load_fraction"), ("load with one replica down", "serve_load_after_failure"),
             ("servers if bought (whole servers)", "serve_servers"), ("GPUs bought", "own_gpus"),
             ("rented: USD per million input tokens", "serve_rent_usd_per_mtok_input"),
             ("rented: USD per million output tokens", "serve_rent_usd_per_mtok_output"),
             ("owned: USD per million input tokens", "serve_own_usd_per_mtok_input"),
             ("owned: USD per million output tokens", "serve_own_usd_per_mtok_output"),
             ("rented: USD per month", "serve_rent_usd_per_month"), ("owned: USD per month", "serve_own_usd_per_month"),
             ("API: USD per month for the same tokens", "serve_api_usd_per_month")]
    from ..core import NO_PRICE, SERVES_NOTHING, evaluate, layout_reason_text, price_gaps
    if used["task"] != "serve":  # what is owned is the deployment (whole servers), whatever task the estimate names
        res = {**res, **evaluate({**given, "task": "serve"}, outputs=[q for _, q in shown])}
    # printed once the serving inputs passed their checks: an error leaves no half-written block
    print(f"serving the demand given, {n(res['serve_demand_requests_per_s'])} requests/s of {n(used['prompt_tokens'])} prompt + "
          f"{n(used['output_tokens'])} output tokens, on replicas of {n(used['n_gpus'])}x {used['gpu']} ({used['weights_dtype']}), "
          f"within {n(used['ttft_slo_ms'])} ms to the first token and {n(used['tpot_slo_ms'])} ms per token (0 = no target), "
          f"at a target utilization of {used['target_utilization']:g} with {n(used['spare_replicas'])} spare:")
    missing = price_gaps({**used, **res}, [q for _, q in shown])  # a missing price reads "no price", never 0
    # a replica that meets no target serves nothing: no replicas, load or cost to show (never $0)
    idle = not res["serve_layout_batch"] > 0
    fleet = {"serve_replica_requests_per_s", "serve_replicas", "serve_load_fraction", "serve_load_after_failure",
             "serve_servers", "own_gpus"}
    # prefill and decode apart (serving_layout 2) on an offer that states no network: no time for the KV cache to show
    no_link = bool(res["serve_disaggregated"]) and not int(evaluate({**given, "task": "serve"},
                                                                    outputs=("disagg_kv_link_code",))["disagg_kv_link_code"])
    unlinked = {"disagg_kv_transfer_ms", "ttft_ms", "serve_ttft_at_load_ms"} if no_link else set()
    facts = [[label, NO_PRICE if q in missing else bool(res[q]) if q in ("serve_ok", "serve_disaggregated")
              else "no link" if q in unlinked
              else SERVES_NOTHING if idle and (q in fleet or "usd" in q) and "api" not in q else res[q]] for label, q in shown]
    notes = list(dict.fromkeys(missing.values()))
    if no_link:
        notes.append(f"No link: {used['offer']} states no network between its machines to carry the KV cache from prefill "
                     "to decode replicas (KV transfer GB/s per GPU on the inputs, --kv-transfer-gb-per-s, sets one).")
    if not idle:
        layout = "disaggregated" if res["serve_disaggregated"] else "aggregated"
        lay = evaluate({**given, "task": "serve"}, outputs=("serve_layout_reason_code", "serve_aggregated_gpus", "disagg_gpus"))
        notes.append("Layout: " + layout_reason_text(int(lay["serve_layout_reason_code"]), layout, float(lay["serve_aggregated_gpus"]),
                                                      float(lay["disagg_gpus"]), float(used["disaggregation_min_saving_pct"]))
                     + " (serving_layout: 0 = choose, 1 = aggregated, 2 = disaggregated).")
    notes.append(_plan_differs(ns, given, used, res))
    return facts, notes
def _fits_text(res, used) -> str:
    """Whether training fits, in words: yes, tight (device total above 90 % of the memory) or no (tensors above the
    fit limit, or the device total above the memory)."""
    if not res["fits_train"]:
        if res["fits_train_gpu_memory"]:  # the GPUs hold it: the machine's CPU memory does not hold the offloaded states
            from ..core import HOST_MEMORY_USABLE
            return (f"no (the offloaded states above {100 * HOST_MEMORY_USABLE:g} % of the machine's CPU memory: "
                    "host_memory_gib_per_gpu)")
        return f"no (tensors above {100 - used['memory_margin_pct']:g} % of the memory, or the total above it)"
    if res["train_memory_may_exceed"]:
        return "yes by the estimate, but its likely peak is above the memory: it may not fit"
    return "tight (above 90 % of the memory)" if res["train_memory_tight"] else "yes"


def _network_text(given) -> str:
    from ..core import cluster_network
    return cluster_network(given)


def _check_heads_split(ns, resolved, model_row) -> None:
    """Inference splits the model over all n_gpus, training over tensor_parallel: the heads must divide (a KV head
    replicated on several GPUs is said on standard error)."""
    from ..core import heads_problem, kv_replication_note
    split = int(resolved["n_gpus"]) if ns.mode == "infer" else int(resolved["tensor_parallel"])
    if ns.mode == "infer" and heads_problem(model_row, split):
        raise InputError("n_gpus", split, f"GPUs in tensor parallel for inference {heads_problem(model_row, split)}")
    if kv_replication_note(model_row, split) and not ns.json:
        print(f"gpu-tco: note: {kv_replication_note(model_row, split)}", file=sys.stderr)


def _checked(ns, given: dict) -> dict:
    """The inputs resolved, and with a serving demand the serving block's checks too, before anything is printed."""
    from ..core import resolve_inputs
    if ns.mode == "infer" and serving_demand_given(given):
        resolve_inputs({**given, "task": "serve"})
    return resolve_inputs(given)


def _request_note(used: dict) -> str:
    """"; not the 32,768-token sequences of the memory above: --prompt-tokens sets them" where the request timed is
    not as long as the context the memory is sized for (the serving figures time requests of prompt + output tokens)."""
    request = float(used["prompt_tokens"]) + float(used["output_tokens"])
    context = float(used["context_tokens"])
    if abs(request - context) <= 0.01 * context:
        return ""
    return f"; not the {number_text(context)}-token sequences of the memory above: --prompt-tokens sets them"


def _inference_facts(res, used: dict) -> list[list]:
    """The inference estimate's results: whether it fits the engine's memory, the KV cache, the largest batch and
    longest context that fit, and the engine's decode and prefill speeds ("-" where the replica runs nothing)."""
    from ..core import fit_gaps
    # a replica whose weights leave no room for one request runs nothing: core's words, as the serving planner's
    not_fit = fit_gaps(res, ["decode_tokens_per_s"]).get("decode_tokens_per_s")
    return [
        ["fits", res["fits_infer"]], ["KV cache, whole batch (GiB)", res["kv_cache_gib"]],
        ["KV bytes per token", res["kv_bytes_per_token"]], ["largest batch that fits", res["max_batch_fit"]],
        ["longest context that fits", res["max_context_fit"]],
        # the engine's decode step, as the serving figures below use it (fixed time per step included)
        [f"decode tokens/s per sequence ({engine_text(used['engine'])}, {number_text(used['prompt_tokens'])} prompt + "
         f"{number_text(used['output_tokens'])} output tokens{_request_note(used)})", not_fit or res["engine_decode_tokens_per_s_per_seq"]],
        ["decode tokens/s per sequence, likely range (the engine's measured spread)", "-" if not_fit else
         f"{significant_text(res['engine_decode_tokens_per_s_per_seq_likely_low'], 4)} to "
         f"{significant_text(res['engine_decode_tokens_per_s_per_seq_likely_high'], 4)}"],
        ["decode tokens/s, whole batch", "-" if not_fit else res["engine_decode_tokens_per_s"]],
        ["prefill tokens/s", "-" if not_fit else res["prefill_tokens_per_s"]],
    ]


def cmd_estimate(ns) -> int:
    from ..core import QUANTITIES, breakdown, evaluate, inference_inputs, row_of

    given = _collect_inputs(ns)
    format_given = "weights_dtype" in given
    if ns.mode == "infer":  # the weights as the model was released (gpt-oss's MXFP4) unless a format is given
        given = inference_inputs(given)
    res = evaluate(given)
    resolved = _checked(ns, given)
    network = _network_text(given) if ns.mode == "train" else ""  # a named offer too small for the job is refused
    used = {i.name: resolved[i.name] for i in INPUTS}
    gpu_row, model_row = row_of(resolved, "gpu"), row_of(resolved, "model")
    model_name = model_row["name"]
    _check_heads_split(ns, resolved, model_row)
    assumptions = {
        "inputs": used,
        "gpu_source": f"{cite(gpu_row['source'], short=True)} (as of {gpu_row['as_of']})",
        "model_source": f"{cite(model_row['source'], short=True)}" + (f" (as of {model_row['as_of']})" if model_row.get("as_of") else ""),
        "model_is_estimate": bool(res["model_is_estimate"]),
        "network": network,
        # the serving quantities (serve_*) are for this demand: the user's, or the default one when none was given
        "serving_demand": "given" if serving_demand_given(given) else "default (not given: requests_per_s or monthly_mtok)",
    }
    if ns.json:
        print(json.dumps({"quantities": {k: _jsonable(v) for k, v in res.items()},
                          "units": {k: q.unit for k, q in QUANTITIES.items()},
                          "breakdown_train_gib_per_gpu": {k: _jsonable(v) for k, v in breakdown(res, "train").items()},
                          "breakdown_infer_gib_per_gpu": {k: _jsonable(v) for k, v in breakdown(res, "infer").items()},
                          "assumptions": assumptions, "fits_with": _fits_with(ns, given, res)}, indent=2))
        return 0
    print(f"{model_name} ({res['params_total_b']:.2f}B params{', ESTIMATED architecture' if res['model_is_estimate'] else ''})"
          f" on {used['n_gpus']}x {used['gpu']} ({res['gpu_memory_gib']:.0f} GiB each)")
    if ns.mode == "train":
        print(f"training with {used['framework']}: {used['method']}, {used['precision']}, {used['optimizer']}, "
              f"sharding {used['sharding']}, recompute {used['recompute']}, seq {used['seq_len']}"
              f"{packed_documents_text(used)}, micro-batch {used['micro_batch']}")
        comp = breakdown(res, "train")
        print(table(["component", "GiB/GPU"], [[MEMORY_ROW.get(k, k), v] for k, v in comp.items() if k != "kv_cache"]))
        print()
        facts = _training_facts(res, used)
    else:
        released = " (as the model was released)" if not format_given and "weights_dtype" in given else ""
        print(f"inference: weights {used['weights_dtype']}{released}, KV {used['kv_dtype']}, context {used['context_tokens']}, batch {used['batch']}")
        comp = breakdown(res, "infer")
        print(table(["component", "GiB/GPU"], [[MEMORY_ROW.get(k, k), v] for k, v in comp.items()
                                               if k not in ("gradients", "optimizer", "logits")]))
        print()
        facts = _inference_facts(res, used)
        if res["state_bytes_per_seq"] > 0:  # hybrid models: the state layers' fixed memory per sequence, in the kv_cache row
            facts.insert(3, ["fixed-size state bytes per sequence", res["state_bytes_per_seq"]])
        print(table(["result", "value"], facts))
        print()
        facts, notes = _estimate_serving(ns, given, used, res)
        if facts:  # the engine's figures (its fixed costs, the latency at a concurrency) after the per-token time
            at = next(i for i, (label, _) in enumerate(facts) if label.startswith("time per output token")) + 1
            facts[at:at] = _engine_facts(used, res)
    if facts:
        print(table(["result", "value"], facts))
    fix = _fits_with(ns, given, res)
    if fix:
        print(f"It does not fit as given; it {fix}.")
    for note in notes if ns.mode == "infer" else ():
        print(note)
    if network:
        print(network)
    print()
    print(f"GPU data: {assumptions['gpu_source']}")
    print(f"Model data: {assumptions['model_source']}")
    return 0


def _fits_with(ns, given: dict, res) -> str | None:
    """For a training job that does not fit: the cheapest change that makes it fit, in the words the main job, the plan,
    the form and the workbook use ("fits with parameters in CPU memory (FSDP CPU offload): 18.4 of 24 GiB per GPU,
    ..."); None when it fits, or when nothing tried does."""
    if ns.mode != "train" or res["fits_train"]:
        return None
    from ..core import what_would_fit
    change = what_would_fit(given)
    return None if change is None else change.sentence()


def _training_facts(res: dict, used: dict) -> list:
    """The training rows of ``estimate``'s result table (``res``: every quantity, ``used``: the resolved inputs)."""
    # a job that does not fit has no hours, throughput or GPU-hours: core's words, as the planner and Excel say it
    from ..core import fit_gaps
    not_fit = fit_gaps(res, ["train_hours"]).get("train_hours")
    return [
        ["fits", _fits_text(res, used)], ["GPUs needed (this GPU)", res["gpus_needed"] or "never"],
        ["longest sequence that fits", res["max_train_seq_len"]],
        ["trainable parameters", res["trainable_params"]], ["training tokens", res["train_tokens_total"]],
        # the efficiency the matrix products run at, the whole step's (what the mfu input stands for), and the model FLOPs
        # utilization it comes to after communication and the pipeline bubble
        ["matrix-product efficiency (calibrated)", res["mfu_effective"]],
        ["GPU efficiency over the whole step (the mfu input, or calibrated)", res["mfu_whole_step"]],
        ["MFU (model FLOPs / dense peak)", "-" if not_fit else res["train_mfu_achieved"]],
        ["throughput (tokens/s)", "-" if not_fit else res["train_tokens_per_s"]],
        ["training hours", not_fit or res["train_hours"]],
        ["training hours, likely range", "-" if not_fit else
         f"{significant_text(res['train_hours_likely_low'])} to {significant_text(res['train_hours_likely_high'])}"],
        ["device total GiB/GPU, likely range", f"{significant_text(res['peak_train_gib_likely_low'])} to "
                                               f"{significant_text(res['peak_train_gib_likely_high'])}"],
        ["GPU-hours", "-" if not_fit else res["train_gpu_hours"]],
    ]


ENGINE_FACTS = ("tpot_ms_likely_low", "tpot_ms_likely_high", "ttft_ms_likely_low", "ttft_ms_likely_high", "load_tpot_ms",
                "load_ttft_ms", "load_tpot_ms_likely_low", "load_tpot_ms_likely_high", "load_ttft_ms_likely_low",
                "load_ttft_ms_likely_high", "load_output_tokens_per_s_per_gpu", "serve_concurrency", "serve_disaggregated",
                "disagg_kv_link_code")


def _engine_facts(used: dict, res: dict) -> list:
    """Rows of the serving table for the engine: its name, the likely ranges, and the latency at the concurrency given."""
    from ..core import engine_text, evaluate
    extra = evaluate(used, outputs=ENGINE_FACTS)
    rows = [["serving engine", engine_text(str(used["engine"]))],
            ["time to first token, likely range (ms)",
             "no link" if extra["serve_disaggregated"] and not int(extra["disagg_kv_link_code"])  # (as the rows above say)
             else f"{extra['ttft_ms_likely_low']:,.0f}-{extra['ttft_ms_likely_high']:,.0f}"],
            ["time per output token, likely range (ms)", f"{extra['tpot_ms_likely_low']:.1f}-{extra['tpot_ms_likely_high']:.1f}"]]
    if float(used["concurrency"]) > 0:
        c = number_text(extra["serve_concurrency"])
        rows += [[f"with {c} requests in flight: time to first token (ms)",
                  f"{extra['load_ttft_ms']:,.0f} (likely {extra['load_ttft_ms_likely_low']:,.0f}-{extra['load_ttft_ms_likely_high']:,.0f})"],
                 [f"with {c} requests in flight: time per output token (ms)",
                  f"{extra['load_tpot_ms']:.1f} (likely {extra['load_tpot_ms_likely_low']:.1f}-{extra['load_tpot_ms_likely_high']:.1f})"],
                 [f"with {c} requests in flight: output tokens/s per GPU", f"{extra['load_output_tokens_per_s_per_gpu']:,.0f}"]]
    return rows


ESTIMATE_GROUPS = ("architecture", "lora", "training memory", "training compute", "inference", "serving")
