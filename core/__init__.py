"""gpu-tco's engine: memory, GPU count, time and cost of LLM work, from one set of formulas.

    >>> from gpu_tco import core
    >>> r = core.evaluate({"model": "Llama-3-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora"})
    >>> r["fits_train"]
    True

Public API: ``evaluate``, ``plan``, ``recommend``, ``what_would_fit``, ``explain``, ``breakdown``, ``breakeven_series``,
``resolve_inputs``, ``free_sweep_memory``, ``INPUTS``, ``QUANTITIES``, ``GpuTcoError`` (``InputError``,
``CatalogError``), ``catalog``.  The engine imports no front end (no command line,
workbook, Excel or Qt code) and needs only NumPy.
"""
from . import catalog
from .architectures import estimate_architecture
from .costs import breakeven_series
from .engine import breakdown, evaluate, explain, free_sweep_memory, resolve_inputs
from .errors import CatalogError, GpuTcoError, InputError
from .formulas import QUANTITIES
from .inputs import DEFAULTS, INPUTS
from .planner import Option, plan
from .recommendation import Recommendation, recommend, what_would_fit
from .version import __version__

__all__ = [
    "evaluate", "plan", "explain", "breakdown", "breakeven_series", "resolve_inputs", "estimate_architecture",
    "free_sweep_memory", "recommend", "what_would_fit", "Option", "Recommendation",
    "INPUTS", "DEFAULTS", "QUANTITIES", "GpuTcoError", "InputError", "CatalogError", "catalog", "__version__",
]
