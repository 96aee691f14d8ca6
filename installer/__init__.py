"""gpu-tco: which GPUs, how many, how long, rent or buy, how much, for LLM work.

    >>> import gpu_tco
    >>> r = gpu_tco.evaluate({"model": "Llama-3-8B", "gpu": "RTX-4090", "n_gpus": 1, "method": "qlora"})
    >>> r["fits_train"]
    True

The public API is the engine's (``gpu_tco.core``): ``evaluate``, ``plan`` (``{"task": "serve", ...}`` plans a serving
deployment: ``serve_plan``), ``recommend``, ``what_would_fit``, ``explain``,
``breakdown``, ``resolve_inputs``, the declarations ``INPUTS`` and ``QUANTITIES``, and the
error types (``GpuTcoError`` and its subclasses ``InputError`` and ``CatalogError``).
Front ends live beside it: ``gpu_tco.cli`` (the ``gpu-tco`` command), ``gpu_tco.workbooks``
(the formula-linked .xlsx), ``gpu_tco.addin`` (Excel functions) and ``gpu_tco.gui``
(the desktop form).  Importing this package imports none of them.
"""
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for readers and type checkers; at run time the names load on first use (below)
    from .core import (
        DEFAULTS,
        INPUTS,
        QUANTITIES,
        CatalogError,
        GpuTcoError,
        InputError,
        __version__,
        breakdown,
        breakeven_series,
        catalog,
        estimate_architecture,
        evaluate,
        explain,
        plan,
        recommend,
        resolve_inputs,
        serve_plan,
        what_would_fit,
    )

__all__ = [
    "evaluate", "plan", "serve_plan", "recommend", "what_would_fit", "explain", "breakdown", "breakeven_series", "resolve_inputs",
    "estimate_architecture", "INPUTS", "DEFAULTS", "QUANTITIES", "GpuTcoError", "InputError", "CatalogError", "catalog", "__version__",
]


def __getattr__(name: str):
    """The public API loads with the engine on first use: ``gpu-tco`` starts by importing this package,
    and its Ctrl-C handling has to be in place before the engine's imports (NumPy: about 0.3 s) begin."""
    if name in __all__ or name == "core":
        import importlib
        core = importlib.import_module(__name__ + ".core")
        value = core if name == "core" else getattr(core, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
