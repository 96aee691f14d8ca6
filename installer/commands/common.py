"""What every command shares: reading --INPUT options, tables and numbers as the terminal shows them."""
from __future__ import annotations

import argparse
import math
import sys
from itertools import repeat

from ..core import INPUTS, InputError, catalog, is_whole_number, number_text
from .exits import EXIT_BAD_INPUT


def _parse_value(inp, text: str):
    """Command-line text to the value core expects (validation happens in core)."""
    if inp.kind == "choice":
        if inp.accepts_number:
            try:
                return float(text)
            except ValueError:
                return text
        return text
    if inp.kind == "flag":
        low = text.strip().lower()
        if low in ("1", "yes", "true", "on", "y"):
            return 1
        if low in ("0", "no", "false", "off", "n"):
            return 0
        raise InputError(inp.name, text, f"is not a flag; allowed: {inp.allowed()}")
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise InputError(inp.name, text, f"is text; allowed: {inp.allowed()}") from None
    return int(x) if inp.kind == "integer" and math.isfinite(x) and x == int(x) else x


class Parser(argparse.ArgumentParser):
    """argparse with the manners of common command-line tools: a parse error is one line naming
    the problem and where to look, not the whole usage (exit code 2)."""

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# how --help groups the inputs: (heading, Input.group values)
HELP_GROUPS = (
    ("the job", ("model", "training", "job", "planning")),
    ("hardware", ("hardware",)),
    ("inference", ("inference",)),
    ("renting", ("renting",)),
    ("owning", ("owning",)),
    ("serving cost", ("serving",)),
    ("advanced (memory overheads)", ("overheads",)),
)


def _add_input_options(p: argparse.ArgumentParser, names=None) -> None:
    """One --option per input the command uses (``names``; all when None), grouped like a form."""
    p.add_argument("--preset", default=None, metavar="NAME",
                   help="start from a named preset (published articles' scenarios: gpu-tco presets); --INPUT options override it")
    p.add_argument("--scenario", default=None, metavar="FILE",
                   help="JSON or TOML file of inputs (the option names with _, e.g. seq_len); --INPUT options override it")
    from ..core import AUTO_QUANTITY
    wanted = set(names) if names is not None else {i.name for i in INPUTS}
    for heading, groups in HELP_GROUPS:
        chosen = [i for i in INPUTS if i.group in groups and i.name in wanted]
        if not chosen:
            continue
        g = p.add_argument_group(f"{heading} (defaults in brackets)")
        for inp in chosen:
            unit = "" if inp.unit in ("-", "") else f", {inp.unit}"
            g.add_argument(f"--{inp.name.replace('_', '-')}", dest=f"in_{inp.name}", metavar="V",
                           help=f"{inp.description}{unit} [{'default: auto' if inp.name in AUTO_QUANTITY else inp.default}]"
                           .replace("%", "%%"))


def _collect_inputs(ns) -> dict:
    by = {i.name: i for i in INPUTS}
    out = {}
    if getattr(ns, "preset", None):
        from ..core import preset
        out.update(preset(ns.preset))
    if getattr(ns, "scenario", None):
        from ..core import read_scenario, split_scenario
        inputs, gpus = split_scenario(read_scenario(ns.scenario))
        out.update(inputs)
        ns.scenario_gpus = gpus  # the planner's scope; only `plan` uses it
    for key, value in vars(ns).items():
        if key.startswith("in_") and value is not None:
            name = key[3:]
            out[name] = _parse_value(by[name], value)
    _notes(out)
    return out


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and is_whole_number(v):
        return number_text(v)
    if isinstance(v, float):
        # a small value that two decimals would round to 0.00 keeps its significant digits (an MFU of 0.003 is no 0)
        if abs(v) >= 1e6 or (abs(v) < 0.005 and v != 0):
            return f"{v:.4g}"
        return f"{v:,.2f}"
    return str(v)


def table(headers, rows, align=None) -> str:
    """A plain fixed-width text table; a cell holding several lines (wrapped text) spans as many."""
    return column_table(headers, list(zip(*rows)) if rows else [() for _ in headers], align)


def column_table(headers, columns, align=None) -> str:
    """``table`` from its columns (sequences of cells, one per header) instead of its rows."""
    align = align or ["<"] + [">"] * (len(headers) - 1)
    # a column at a time: one that holds text only (the type check runs in C) is taken as it is
    columns = [[str(h)] + (list(column) if set(map(type, column)) <= {str} else
                           [c if isinstance(c, str) else _fmt(c) for c in column])
               for h, column in zip(headers, columns)]
    one_line = not any("\n" in "\t".join(column) for column in columns)
    if one_line and set(align) <= {"<", ">"}:
        # one line per row: padded a column at a time, in C (100,000 offers in a fraction of a second)
        widths = [max(map(len, column)) for column in columns]
        padded = [list(map(str.ljust if a == "<" else str.rjust, column, repeat(w))) for column, a, w in zip(columns, align, widths)]
        lines = list(map(str.rstrip, map("  ".join, zip(*padded))))
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)
    cells = list(zip(*columns))
    if one_line:
        widths = [max(map(len, column)) for column in columns]
        fmt = "  ".join(f"{{:{a}{w}}}" for a, w in zip(align, widths))
        return "\n".join([fmt.format(*cells[0]).rstrip(), "  ".join("-" * w for w in widths)]
                         + [fmt.format(*r).rstrip() for r in cells[1:]])
    widths = [max(len(line) for r in cells for line in r[i].split("\n")) for i in range(len(headers))]
    lines = []
    for j, r in enumerate(cells):
        parts = [c.split("\n") for c in r]
        for k in range(max(len(x) for x in parts)):
            lines.append("  ".join(f"{(x[k] if k < len(x) else ''):{a}{w}}" for x, a, w in zip(parts, align, widths)).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _value_text(name: str, value) -> str:
    """A quantity's value as a person reads it: -1 where the description says "-1 = never" prints as never."""
    from ..core import QUANTITIES
    if value == -1 and "-1 = never" in QUANTITIES[name].description:
        return "never"
    return _fmt(_jsonable(value))


def _safe(text: str) -> str:
    """Text for the terminal: control characters (escape sequences from a catalog or an argument) shown as
    \\xNN instead of being obeyed."""
    return "".join(c if c in "\n" or (" " <= c != "\x7f") else f"\\x{ord(c):02x}" for c in text)


def _notes(inputs: dict) -> None:
    """Say how a typed model or GPU name was read (a Hugging Face id, an -Instruct variant, a bare size)."""
    for key, table_name in (("model", "models"), ("gpu", "gpus")):
        value = inputs.get(key)
        if isinstance(value, str):
            note = catalog.tables()[table_name].match_note(value)
            if note:
                print(f"gpu-tco: note: {note}", file=sys.stderr)
    from ..core import size_in_billions
    model = inputs.get("model")
    if isinstance(model, str) and catalog.models().find(model) is None:
        from ..core import hf_config
        row = hf_config.resolve(model)  # a config.json or a Hub id: say which file the architecture came from
        if row is not None:
            print(f"gpu-tco: note: {_safe(hf_config.describe(row))}", file=sys.stderr)
    if isinstance(model, (int, float)) or (isinstance(model, str) and size_in_billions(model) is not None):
        print(f"gpu-tco: note: model {model!r} is read as a parameter count: the architecture is estimated "
              "(Llama-3 shape rules), and results say so", file=sys.stderr)


def _jsonable(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# ---------------------------------------------------------------------------
def _money(v) -> str:
    return "-" if v != v else f"${v:,.0f}"


def _inputs_for(quantities, drop=(), planner: bool = False) -> list[str]:
    """The inputs ``quantities`` read (and, for a command that plans, the planner's own), less ``drop``."""
    from ..core import PLANNER_INPUTS, inputs_of
    names = inputs_of(quantities) + [n for n in (PLANNER_INPUTS if planner else ()) if n not in inputs_of(quantities)]
    return [n for n in names if n not in set(drop)]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; allowed: a whole number >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too small; allowed: a whole number >= 1")
    return value
