"""gpu-tco core: memory, GPU count, time and cost of LLM work, from one set of formulas.

    >>> import core
    >>> r = core.evaluate({"model": "Llama-3-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora"})
    >>> r["fits_train"]
    True

Public API: ``evaluate``, ``explain``, ``breakdown``, ``resolve_inputs``, ``INPUTS``,
``QUANTITIES``, ``InputError``, ``CatalogError``, ``catalog``.
"""
from . import catalog
from .engine import breakdown, estimate_architecture, evaluate, explain, resolve_inputs
from .errors import CatalogError, InputError
from .formulas import QUANTITIES
from .inputs import DEFAULTS, INPUTS

__version__ = "0.1.0"
__all__ = [
    "evaluate", "explain", "breakdown", "resolve_inputs", "estimate_architecture",
    "INPUTS", "DEFAULTS", "QUANTITIES", "InputError", "CatalogError", "catalog", "__version__",
]
