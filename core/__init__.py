"""gpu-tco's engine: memory, GPU count, time and cost of LLM work, from one set of formulas.

    >>> from gpu_tco import core
    >>> r = core.evaluate({"model": "Llama-3-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora"})
    >>> r["fits_train"]
    True

Public API (``__all__``): everything the front ends (command line, workbook, Excel functions, form) use, so
that they import from ``gpu_tco.core`` only and a module inside core can change without breaking them
(tests/test_structure.py checks it).  Grouped:

- evaluation: ``evaluate``, ``explain``, ``breakdown``, ``resolve_inputs``, ``inference_inputs``, ``check_input``, ``row_of``,
  ``free_sweep_memory``, ``breakeven_series``, ``sensitivities``, ``estimate_architecture``; the declarations
  ``INPUTS``, ``DEFAULTS``, ``QUANTITIES`` and the tables the front ends lay out from them.
- planning and recommendation: ``plan``, ``recommend``, ``what_would_fit``, ``Option``, ``Recommendation``, ...;
  serving: ``serve_plan`` (also ``plan({"task": "serve", ...})``), ``ServeOption``, ``serve_sentence``.
- catalogs: the ``catalog`` module, prices, presets, Hugging Face configs, today's offers.
- errors: ``GpuTcoError`` (``InputError``, ``CatalogError``) and the message helpers.
- helpers the front ends use: scenario files, the atomic writer, citations, close-match suggestions
  (``did_you_mean``: one wording for every message) and number display (``number_text``), docs.

The engine imports no front end (no command line, workbook, Excel or Qt code) and needs only NumPy.
"""
from . import catalog, hf_config
from .architectures import REQUIRED_FIELDS, estimate_architecture, size_in_billions
from .auto import AUTO_BASIS, AUTO_QUANTITY
from .auto import in_use as auto_in_use
from .catalog import user_config_dir
from .codegen import depending_on, inputs_of
from .collector import collector_paused
from .costs import breakeven_series, sensitivities
from .engine import breakdown, check_input, evaluate, explain, free_sweep_memory, inference_inputs, resolve_inputs, row_of
from .errors import CatalogError, GpuTcoError, InputError, one_line
from .errors import show as show_value
from .expr import text as formula_text
from .files import STALE_SECONDS, TEMP_MARK, same_file, target_problem, write_atomically
from .formulas import INFER_COMPONENTS, NOT_ADDITIVE, QUANTITIES, TRAIN_COMPONENTS, VERDICTS
from .inputs import BY_NAME as INPUTS_BY_NAME
from .inputs import DEFAULTS, HOST_MEMORY_USABLE, INPUTS, Input
from .inputs import FIRST as FIRST_INPUTS
from .inputs import SECTIONS as INPUT_SECTIONS
from .launch import launch_command
from .layout import unit as layout_unit
from .names import suggest
from .planner import (
    ALIKE_OFFERS_KEPT,
    BOUGHT_OUTPUTS,
    PLAN_OUTPUTS,
    PLANNER_INPUTS,
    PRICE_INPUTS,
    REJECTIONS,
    TIE_COLUMNS,
    TIE_DIGITS,
    Option,
    bought_instead,
    cheaper_listed_offer,
    check_offer_sells,
    cluster_network,
    consumer_gpu,
    likely_hours_text,
    offer_rows_left_out,
    offers_kept_for,
    option_inputs,
    option_text,
    payback_text,
    planned_offers,
    purchase_note,
    ranks_purchases,
    same_option,
    tie_key,
    tie_round,
    unsold_purchase_text,
    verdict_text,
)
from .planner import scope as plan_scope
from .recommendation import (
    Recommendation,
    at_least_text,
    headline,
    headline_xl,
    job_hours_text,
    nearest_option,
    recommend,
    sharding_name,
    what_would_fit,
)
from .recommendation import compose as compose_recommendation
from .recommendation import nearest as nearest_options
from .references import cite
from .serving import (
    API_OTHER_MODEL_HINT,
    SERVE_CONSUMER_LICENSE,
    SERVE_OUTPUTS,
    SERVE_RANKING,
    SERVE_REJECTIONS,
    SPARE_REPLICA_HINT,
    ServeOption,
    engine_text,
    launch_commands,
    lead_option,
    likely_text,
    plan,
    serve_curves,
    serve_option_inputs,
    serve_option_text,
    serve_plan,
    serve_sentence,
    tradeoff_curve,
)
from .text import (
    allowed_hint,
    close_matches,
    did_you_mean,
    fit_word,
    formula_safe,
    is_whole_number,
    number_text,
    packed_documents_text,
    significant_text,
    spreadsheet_round,
)
from .validation import heads_problem, kv_replication_note

# Loaded on first use (PEP 562): the command line imports this package at start, and these modules are
# needed by one command or one menu item each, so they stay out of every start.
_ON_FIRST_USE = {
    "calibration": ("calibration", None),
    "serving_calibration": ("serving_calibration", None),
    "write_calibration_doc": ("calibration", "write_doc"),
    "QUANTITIES_DOC_PATH": ("docs", "DOC_PATH"),
    "__version__": ("version", "__version__"),  # the package metadata: importlib.metadata alone is about 13 ms
    "write_quantities_doc": ("docs", "write"),
    "NO_PRICE": ("prices", "NO_PRICE"),
    "NO_OFFER": ("prices", "NO_OFFER"),
    "PRICE_FLAGS": ("prices", "PRICE_FLAGS"),
    "NEEDS_PURCHASE_PRICE": ("prices", "NEEDS_PURCHASE_PRICE"),
    "NEEDS_RENTAL_PRICE": ("prices", "NEEDS_RENTAL_PRICE"),
    "price_gaps": ("prices", "gaps"),
    "NEEDS_FIT": ("job_fit", "NEEDS_FIT"),
    "FIT_OUTPUTS": ("job_fit", "FIT_OUTPUTS"),
    "fit_gaps": ("job_fit", "gaps"),
    "not_fitting_rows": ("job_fit", "not_fitting_rows"),
    "not_fit_text": ("job_fit", "not_fit_text"),
    "serve_not_fit_text": ("job_fit", "serve_not_fit_text"),
    "fit_outputs": ("job_fit", "fit_outputs"),
    "FIT_INPUTS": ("job_fit", "FIT_INPUTS"),
    "require_prices": ("prices", "require"),
    "PRESETS": ("presets", "PRESETS"),
    "preset": ("presets", "preset"),
    "refresh_offers": ("price_refresh", "refresh"),
    "REFRESHED_OFFERS_SOURCE": ("price_refresh", "SOURCE"),
    "refreshed_note": ("price_refresh", "refreshed_note"),
    "read_scenario": ("scenario_files", "read_scenario"),
    "split_scenario": ("scenario_files", "split_scenario"),
    "write_scenario": ("scenario_files", "write_scenario"),
    "DEFAULT_JOB": ("scenarios", "DEFAULT_JOB"),
    "with_planned_sharding": ("layout", "with_planned_sharding"),
    "COMPARED_METHODS": ("scenarios", "METHODS"),
    "compare_setups": ("scenarios", "compare"),
    "worded_recommendations": ("scenarios", "worded_recommendations"),
    "compared_setups": ("scenarios", "compared_setups"),
    "named_offer": ("scenarios", "named_offer"),
    "api_prices": ("apis", None),  # the API price catalog's update (gpu-tco apis --update / --refresh)
    # the serving doors (form, workbook): what the serving planner chooses, a quantity's ancestors
    "SERVE_CHOSEN": ("serving", "CHOSEN"),
    "serve_option_notes": ("serving", "serve_option_notes"),
    "SERVES_NOTHING": ("serving", "SERVES_NOTHING"),
    "layout_reason_text": ("serving", "layout_reason_text"),
    "SERVING_LAYOUT_REASONS": ("serving", "LAYOUT_REASONS"),
    "KV_LINK_WORDS": ("serving", "KV_LINK_WORDS"),
    "weight_accuracy_effect": ("serving", "accuracy_effect"),
    "ancestors": ("codegen", "ancestors"),
}

__all__ = [
    # evaluation
    "evaluate", "explain", "breakdown", "resolve_inputs", "check_input", "row_of", "free_sweep_memory", "inference_inputs",
    "heads_problem", "kv_replication_note", "formula_safe",
    "breakeven_series", "sensitivities", "estimate_architecture", "size_in_billions", "REQUIRED_FIELDS",
    "INPUTS", "INPUTS_BY_NAME", "Input", "INPUT_SECTIONS", "FIRST_INPUTS", "DEFAULTS", "HOST_MEMORY_USABLE", "AUTO_QUANTITY", "AUTO_BASIS",
    "auto_in_use", "QUANTITIES", "TRAIN_COMPONENTS", "INFER_COMPONENTS", "NOT_ADDITIVE", "VERDICTS", "depending_on",
    "inputs_of", "formula_text",
    # planning and recommendation
    "plan", "plan_scope", "Option", "option_inputs", "option_text", "likely_hours_text", "bought_instead", "same_option", "verdict_text", "payback_text", "unsold_purchase_text", "purchase_note",
    "PLAN_OUTPUTS", "PLANNER_INPUTS", "BOUGHT_OUTPUTS", "PRICE_INPUTS", "REJECTIONS", "TIE_DIGITS", "TIE_COLUMNS", "tie_key", "tie_round",
    "layout_unit", "with_planned_sharding", "ranks_purchases", "cluster_network", "check_offer_sells", "cheaper_listed_offer", "consumer_gpu", "ALIKE_OFFERS_KEPT", "planned_offers", "offers_kept_for", "offer_rows_left_out",
    "recommend", "what_would_fit", "Recommendation", "compose_recommendation", "job_hours_text", "nearest_options", "nearest_option", "sharding_name", "headline", "headline_xl", "at_least_text",
    "DEFAULT_JOB", "COMPARED_METHODS", "compare_setups", "compared_setups", "named_offer", "worded_recommendations",
    "serve_plan", "ServeOption", "SERVE_CONSUMER_LICENSE", "SPARE_REPLICA_HINT", "API_OTHER_MODEL_HINT", "serve_option_text", "serve_sentence", "serve_option_inputs", "serve_curves", "tradeoff_curve", "engine_text", "launch_commands",
    "launch_command", "likely_text", "lead_option", "SERVE_OUTPUTS", "SERVE_REJECTIONS", "SERVE_RANKING",
    # catalogs
    "catalog", "hf_config", "NO_PRICE", "NO_OFFER", "PRICE_FLAGS", "NEEDS_PURCHASE_PRICE", "NEEDS_RENTAL_PRICE", "price_gaps",
    "NEEDS_FIT", "FIT_OUTPUTS", "FIT_INPUTS", "fit_outputs", "fit_gaps", "not_fitting_rows", "not_fit_text",
    "serve_not_fit_text",
    "require_prices", "PRESETS", "preset", "refresh_offers", "REFRESHED_OFFERS_SOURCE", "refreshed_note", "api_prices",
    # errors
    "GpuTcoError", "InputError", "CatalogError", "one_line", "show_value",
    # helpers the front ends use
    "read_scenario", "split_scenario", "write_scenario", "write_atomically", "target_problem", "same_file", "collector_paused",
    "TEMP_MARK", "STALE_SECONDS", "user_config_dir", "cite", "suggest", "calibration", "serving_calibration", "write_calibration_doc", "QUANTITIES_DOC_PATH",
    "write_quantities_doc", "__version__",
    # one wording of close-match hints and one rule for showing numbers, in every message
    "did_you_mean", "allowed_hint", "close_matches", "fit_word", "number_text", "packed_documents_text", "significant_text", "is_whole_number", "spreadsheet_round",
    # the serving doors
    "SERVE_CHOSEN", "serve_option_notes", "SERVES_NOTHING", "layout_reason_text", "SERVING_LAYOUT_REASONS", "KV_LINK_WORDS", "weight_accuracy_effect", "ancestors",
]


def __getattr__(name: str):
    if name not in _ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # import statements PyInstaller (the frozen form) can see, not importlib with a computed name; absolute,
    # since "from . import x" would ask this function for x again; each module only when a name of it is asked for
    # (the others already loaded with this package)
    import sys
    module_name, attribute = _ON_FIRST_USE[name]
    if module_name == "apis":
        import gpu_tco.core.apis
    elif module_name == "calibration":
        import gpu_tco.core.calibration
    elif module_name == "docs":
        import gpu_tco.core.docs
    elif module_name == "presets":
        import gpu_tco.core.presets
    elif module_name == "price_refresh":
        import gpu_tco.core.price_refresh
    elif module_name == "prices":
        import gpu_tco.core.prices
    elif module_name == "scenario_files":
        import gpu_tco.core.scenario_files
    elif module_name == "scenarios":
        import gpu_tco.core.scenarios
    elif module_name == "serving_calibration":
        import gpu_tco.core.serving_calibration
    elif module_name == "version":
        import gpu_tco.core.version  # noqa: F401 - each is read from sys.modules below
    module = sys.modules[f"{__name__}.{module_name}"]
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
