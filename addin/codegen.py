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


def _default_text(arg: str) -> str:
    from gpu_tco.core.inputs import BY_NAME
    if arg not in BY_NAME:
        return {"component": "total", "infer_component": "total", "mode": "decode", "offer_or_gpu": "the default GPU",
                "field": "see function", "quantity": "own_tco_usd", "top": "10"}[arg]
    inp = BY_NAME[arg]
    d = inp.default
    d = int(d) if isinstance(d, float) and d.is_integer() else d
    unit = f" {inp.unit}" if inp.unit and inp.unit not in ("-", "name", "flag", "code") and not isinstance(d, str) else ""
    return f"{d}{unit}"


def function_table_markdown() -> str:
    """The README's table of Excel functions, generated so it cannot drift from the code."""
    from .demo import DEMO_INPUTS, EXAMPLES
    from .functions import FUNCTIONS
    values = dict(DEMO_INPUTS)
    rows = ["| function | arguments (default) | result | example |", "|---|---|---|---|"]
    for name, f in FUNCTIONS.items():
        args = ", ".join(f"`{('component' if a == 'infer_component' else a)}` "
                         f"({('memory_gib' if f.args[0] == 'gpu' else 'layers') if a == 'field' else _default_text(a)})"
                         for a in f.args) or "none"
        used = EXAMPLES.get(name, [])
        example_args = []
        for a in f.args:
            key = "offer" if a == "offer_or_gpu" else a
            if not any(u == key for u in used):
                continue
            v = values[key]
            example_args.append(f'"{v}"' if isinstance(v, str) else f"{v:g}")
        example = f"`={name}({','.join(example_args)})`" if name in EXAMPLES else f"`={name}()`"
        unit = f.unit or ("table" if name in ("GPU_PLAN", "GPU_LIST", "MODEL_LIST") else "text" if name == "GPU_EXPLAIN" else "catalog value")
        rows.append(f"| `{name}` | {args} | {unit} | {example} |")
    return "\n".join(rows) + "\n"
