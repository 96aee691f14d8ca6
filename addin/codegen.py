"""Generate the xlwings UDF source from ``addin.functions.FUNCTIONS``.

One generator, two targets, so the classic add-in and xlwings Lite expose the same
functions with the same arguments and help:

* ``classic``: ``@xw.func(category=...)``; errors are returned as "#INPUT! ..." text
  (a classic UDF cannot return a real Excel error; an exception would put a traceback
  in the cell);
* ``lite``: ``from xlwings import func, arg``; a single-cell call raises the same
  message, which xlwings Lite shows as #VALUE! with the text (ranges keep per-row text).

Every argument is declared ``ndim=2`` so a column stays a column when it comes back.
"""
from __future__ import annotations

from .functions import CATEGORY, FUNCTIONS


def _py(text: str) -> str:
    return repr(text)


def udf_source(style: str) -> str:
    if style not in ("classic", "lite"):
        raise ValueError(f"style: unknown {style!r}; allowed: classic, lite")
    lines: list[str] = []
    for f in FUNCTIONS.values():
        params = [("component" if a == "infer_component" else a) for a in f.args]
        if style == "classic":
            lines.append(f"@xw.func(category={CATEGORY!r})")
        else:
            lines.append("@func")
        for arg, param in zip(f.args, params):
            deco = "xw.arg" if style == "classic" else "arg"
            lines.append(f"@{deco}({param!r}, ndim=2, doc={_py(f.arg_doc(arg))})")
        signature = ", ".join(f"{p}=None" for p in params)
        lines.append(f"def {f.name}({signature}):")
        lines.append(f"    {_py(f.doc)}")
        call_args = ", ".join([repr(f.name)] + params + (["raise_errors=True"] if style == "lite" else []))
        lines.append(f"    return _call({call_args})")
        lines.append("")
        lines.append("")
    return "\n".join(lines)
