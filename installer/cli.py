"""Command line: ``gpu-tco`` (the main job) and its subcommands.

    gpu-tco                      the default comparison (Llama 3 70B: own RTX 4090s vs rented H100/A100)
    gpu-tco estimate [--INPUT V ...] [--mode train|infer] [--json]
    gpu-tco gpus | models [--json]
    gpu-tco explain QUANTITY [--INPUT V ...] [--json]
    gpu-tco plan [--INPUT V ...] [--gpus A,B] [--all] [--json]   rank every way to run a job
    gpu-tco tco | breakeven [--INPUT V ...] [--json]            owning; buy versus rent
    gpu-tco offers [--gpu G] [--refresh] [--json]               the cloud offers catalog; --refresh: today's prices (gpuhunt)
    gpu-tco apis [--update FILE | --refresh] [--json]           API prices per million tokens (genai-prices data)
    gpu-tco workbook --out FILE [--email-draft F.eml] [--scenario FILE] [--INPUT V ...]   the formula-linked .xlsx
    gpu-tco form [--scenario FILE] [--screenshot FILE.png]   the desktop form (needs the gui extra)
    gpu-tco bench                speed figures (see README)
    gpu-tco calibrate [--write]  the model against published measurements (docs/calibration.md)
    gpu-tco docs [--out PATH]    regenerate docs/quantities.md, docs/calibration.md and docs/form.png

Every ``--INPUT`` option is generated from the input declarations (name,
unit, default, allowed values).  Bad input exits with code 2 and a one-line
message naming the input, the value and what is allowed.
"""
from __future__ import annotations

import gc
import os
import signal
import sys

from .commands.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, INTERRUPTED

# gpu-tco multiplies no large matrices, so one BLAS thread does: numpy's OpenBLAS otherwise starts a thread per core as
# numpy loads, and on a 2-core machine that doubled the CPU time of a short command (0.26 s to 0.13 s of CPU).  Set
# before anything imports numpy; a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _exit_interrupted(signum=None, frame=None):
    """Ctrl-C outside a command's work (while Python loads the engine, or after the work is done):
    one line and exit 130 at once; nothing is being written then."""
    try:
        os.write(2, (INTERRUPTED + "\n").encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def _started_as_the_command(exactly: bool = False) -> bool:
    """Whether this process is the gpu-tco command (its console script, or python -m gpu_tco), not a
    program that imports this module: only the command's own Ctrl-C handling may be changed.  ``exactly``: the
    console script by its own name only, not any program whose name starts like it."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name in ("gpu_tco.__main__", "gpu_tco.cli"):
        return True
    name = os.path.basename(sys.argv[0] if sys.argv else "").lower()
    return name in ("gpu-tco", "gpu-tco.exe", "gpu-tco-script.py") if exactly else name.startswith("gpu-tco")


# First of all (before argparse, and the engine's imports: NumPy and the catalogs, about 0.3 s), so that
# Ctrl-C during them is one line, not a traceback; main() replaces it while a command runs.
if _started_as_the_command():
    try:
        signal.signal(signal.SIGINT, _exit_interrupted)
    except ValueError:  # imported outside the main thread: Ctrl-C is not this module's to handle
        pass

from .commands.loading import collector_off_while_loading  # noqa: E402 - after the Ctrl-C handler

with collector_off_while_loading(_started_as_the_command(exactly=True)):  # (the engine's imports: see there)
    import argparse  # noqa: E402
    import ast  # noqa: E402
    import errno  # noqa: E402
    import threading  # noqa: E402

    from .commands.catalogs import _catalog_commands, cmd_apis, cmd_catalog, cmd_offers, cmd_presets  # noqa: E402
    from .commands.common import Parser, _add_input_options, _inputs_for, _positive_int, _safe  # noqa: E402
    from .commands.estimate import ESTIMATE_GROUPS, cmd_estimate  # noqa: E402
    from .commands.explain import cmd_explain  # noqa: E402
    from .commands.main_job import MAIN_QUANTITIES, cmd_main  # noqa: E402
    from .commands.owning import BREAKEVEN_LINES, TCO_LINES, cmd_breakeven, cmd_tco  # noqa: E402
    from .commands.plan import CHOSEN_BY_THE_TOOL, cmd_plan  # noqa: E402
    from .commands.tools import _tool_commands, cmd_addin, cmd_bench, cmd_calibrate, cmd_docs, cmd_form  # noqa: E402
    from .commands.workbook import _workbook_error, cmd_workbook  # noqa: E402
    from .core import GpuTcoError  # noqa: E402


class _PrintVersion(argparse.Action):
    """argparse's "version" action, reading the version only when asked: the package metadata it comes from takes
    about 13 ms to load, which every other run of the command would pay."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from .core import __version__
        print(f"gpu-tco {__version__}")
        parser.exit()


# The inputs the main job chooses itself, and how a user names them.
_CHOSEN_BY_THE_MAIN_JOB = {
    "--gpu": "the main job compares every GPU; to name some: gpu-tco plan --gpus A,B, or gpu-tco estimate --gpu G for one",
    "--n-gpus": "the main job finds each GPU's count itself; to set one: gpu-tco estimate --gpu G --n-gpus N",
    "--buy": "the main job ranks purchases with --consider-buying 1",
}


def _main_job_hint(options) -> str:
    """Where to name what the main job chooses itself, for the first of ``options`` it does: "; ..." or ""."""
    where = next((_CHOSEN_BY_THE_MAIN_JOB[o.split("=", 1)[0]] for o in options if o.split("=", 1)[0] in _CHOSEN_BY_THE_MAIN_JOB), None)
    return f"; {where}" if where else ""


class _TopParser(Parser):
    """The parser of ``gpu-tco`` itself.  argparse takes the value of an option it does not know for the command
    (``gpu-tco --gpu H100-SXM`` read as the command "H100-SXM"): that error names the option instead."""

    argv: list = []

    def error(self, message):
        head, _, rest = message.partition("argument COMMAND: invalid choice: ")
        if not head and " (choose from " in rest:
            try:
                bad = ast.literal_eval(rest.split(" (choose from ", 1)[0])  # (argparse writes the value as its repr)
            except (ValueError, SyntaxError):
                bad = None
            # the occurrence argparse read as the command: after an option this parser does not know, written without
            # "=" (an option it knows and that takes a value would have taken it; argparse's own table of options)
            option = next((self.argv[i - 1] for i in range(1, len(self.argv)) if self.argv[i] == bad
                           and self.argv[i - 1].startswith("-") and "=" not in self.argv[i - 1]
                           and self.argv[i - 1] not in self._option_string_actions), None)
            if option is not None:
                message = f"unrecognized arguments: {option} {bad}" + _main_job_hint([option])
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    from .core import QUANTITIES, SERVE_OUTPUTS

    p = _TopParser(prog="gpu-tco", allow_abbrev=False, usage="gpu-tco [--INPUT VALUE ...] [--json] [--workbook PATH] [COMMAND ...]",
                   description="Which GPUs, how many, how long, rent or buy, how much: memory, time and cost of LLM work "
                               "from sourced formulas. Without a command: compare the usual setups for a fine-tuning job, "
                               "name the recommended option and write the workbook.",
                   epilog="Commands: estimate, plan, tco, breakeven, offers, apis, gpus, models, presets, explain, workbook, addin, "
                          "bench, calibrate, docs. Help on one: gpu-tco COMMAND --help.")
    p.add_argument("--version", action=_PrintVersion)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--workbook", default="gpu-tco.xlsx", metavar="PATH",
                   help="where the main job writes its workbook [gpu-tco.xlsx]; '' to skip")
    _add_input_options(p, _inputs_for(MAIN_QUANTITIES, drop={"gpu", "n_gpus", "buy"}, planner=True))
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    p.commands = {}

    def command(name, text, usage_args="[--INPUT VALUE ...] [--json]"):
        parser = sub.add_parser(name, allow_abbrev=False, help=text, description=text + ".", prog=f"gpu-tco {name}",
                                usage=f"gpu-tco {name} {usage_args}")
        p.commands[name] = parser
        return parser

    est = command("estimate", "memory, GPU count and time of one configuration", "[--mode train|infer] [--INPUT VALUE ...] [--json]")
    est.add_argument("--mode", choices=["train", "infer"], default="train", help="training (default) or inference")
    est.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(est, _inputs_for([n for n, q in QUANTITIES.items() if q.group in ESTIMATE_GROUPS]))
    pl = command("plan", "rank every GPU x count x (cloud offer or buying) for a job", "[--gpus A,B] [--top N] [--all] [--INPUT VALUE ...] [--json]")
    pl.add_argument("--gpus", default=None, metavar="A,B", help="comma-separated GPUs to consider (default: the whole catalog)")
    pl.add_argument("--top", type=_positive_int, default=15, metavar="N", help="acceptable options to list [15]")
    pl.add_argument("--all", action="store_true", help="also list rejected options and why")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(pl, ["task"] + _inputs_for([n for n in QUANTITIES if n.startswith("option_")] + ["peak_train_gib_per_gpu"]
                                                  + list(SERVE_OUTPUTS), drop=CHOSEN_BY_THE_TOOL, planner=True))
    for name, text, lines in (("tco", "total cost of owning a setup, line by line", TCO_LINES),
                              ("breakeven", "buy versus rent: payback, break-even, month by month",
                               BREAKEVEN_LINES + ["own_cumulative_usd", "rent_cumulative_usd"])):
        c = command(name, text)
        c.add_argument("--json", action="store_true", help="machine-readable output")
        _add_input_options(c, _inputs_for(lines, drop={"at_month"}))
    _catalog_commands(command)
    ex = command("explain", "formula, Excel formula, source and inputs of a quantity", "QUANTITY [--INPUT VALUE ...] [--json]")
    ex.add_argument("quantity", help="a quantity name, e.g. peak_train_gib_per_gpu (docs/quantities.md lists them)")
    ex.add_argument("--json", action="store_true", help="machine-readable output")
    _add_input_options(ex)
    _tool_commands(command)
    return p


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: sys.argv); the exit code: 0 done, 2 bad input or a file that
    cannot be read or written (one line on stderr), 130 interrupted (Ctrl-C), 1 a bug (one line)."""
    interrupted: list[bool] = []

    def on_ctrl_c(signum, frame):
        if interrupted:  # a second Ctrl-C: at once
            _exit_interrupted()
        interrupted.append(True)
        raise KeyboardInterrupt  # unwinds the command, so a writer removes its temporary

    if argv is None:  # the command in a process of its own (the console script, python -m gpu_tco)
        # what the imports built lives as long as the process: frozen, the collector's passes during the command skip it
        # (about 15 ms of a 0.19 s `gpu-tco plan`; the command itself froze it as its imports ended, a program calling
        # main() with no arguments here)
        gc.freeze()
    previous = None
    try:
        try:
            # (inside the try: a Ctrl-C that lands while the handler is being swapped in is caught below too)
            if threading.current_thread() is threading.main_thread():
                previous = signal.signal(signal.SIGINT, on_ctrl_c)
            code = _run(argv, interrupted)
        except KeyboardInterrupt:  # while an error line was being printed, or as the handler went in
            print(INTERRUPTED, file=sys.stderr)
            code = EXIT_INTERRUPTED
    finally:
        if previous is not None:
            # the command's work is done: as the gpu-tco process itself, a Ctrl-C from here on has nothing to
            # interrupt (SIG_IGN also holds through Python's own shutdown, which resets other handlers to the
            # default and would let a late Ctrl-C end the process with -2 instead of its exit code)
            signal.signal(signal.SIGINT, signal.SIG_IGN if _started_as_the_command() else previous)
    if code == EXIT_INTERRUPTED and _started_as_the_command():
        # interrupted, the line said and the temporaries removed: exit now with 130.  Under load a Ctrl-C taken by
        # the handler could still end the process with -2 (killed by SIGINT) in Python's own exit after the line.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # (a closed or broken stream: nothing more to say)
                pass
        os._exit(EXIT_INTERRUPTED)
    return code


def _options_before_command(argv: list, command) -> list[str]:
    """The options given before ``command`` in ``argv`` (none without a command): the main job's options, which
    the command would otherwise drop for its own defaults."""
    if command is None:
        return []
    before, i = [], 0
    while i < len(argv) and argv[i] != command and argv[i].startswith("-"):
        option = argv[i].split("=", 1)[0]
        before.append(option)
        i += 1 if "=" in argv[i] or option in ("--json", "--version", "-h", "--help") else 2
    return before


def _run(argv, interrupted: list) -> int:
    ns = None
    try:
        parser = build_parser()
        parser.argv = sys.argv[1:] if argv is None else list(argv)
        ns, extra = parser.parse_known_args(argv)
        if extra:  # name the command whose --help lists what it takes
            parser.commands.get(ns.command, parser).error(f"unrecognized arguments: {' '.join(extra)}"
                                                          + ("" if ns.command else _main_job_hint(extra)))
        before = _options_before_command(sys.argv[1:] if argv is None else list(argv), ns.command)
        if before:  # argparse would let the command's own defaults replace them, silently
            parser.commands[ns.command].error(f"{before[0]} comes before the command; put it after: "
                                              f"gpu-tco {ns.command} ... {before[0]}")
        handlers = {None: cmd_main, "estimate": cmd_estimate, "gpus": cmd_catalog, "models": cmd_catalog,
                    "explain": cmd_explain, "bench": cmd_bench, "docs": cmd_docs, "plan": cmd_plan, "tco": cmd_tco,
                    "breakeven": cmd_breakeven, "offers": cmd_offers, "workbook": cmd_workbook, "addin": cmd_addin,
                    "presets": cmd_presets, "form": cmd_form, "calibrate": cmd_calibrate, "apis": cmd_apis}
        return handlers[ns.command](ns)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit:
        raise
    except BaseException as err:  # noqa: BLE001 - sorted below; the last resort is one line, never a traceback
        if interrupted:  # whatever a library made of the KeyboardInterrupt it was interrupted with
            print(INTERRUPTED, file=sys.stderr)
            return EXIT_INTERRUPTED
        if not isinstance(err, Exception):
            raise
        return _report_error(err, ns)


def _report_error(err: Exception, ns) -> int:
    if isinstance(err, (GpuTcoError, _workbook_error())):
        print(f"gpu-tco: error: {_safe(str(err))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if isinstance(err, BrokenPipeError):  # e.g. piped into head
        return 0
    if isinstance(err, RecursionError):
        print("gpu-tco: error: an input is nested too deeply", file=sys.stderr)
        return EXIT_BAD_INPUT
    if isinstance(err, OSError):  # a full disk, a file too large, no permission: the machine's answer, in one line
        where = err.filename if err.filename is not None else getattr(ns, "out", None)
        room = " (not enough room: free some disk space or write elsewhere)" if err.errno in _NO_ROOM else ""
        print(f"gpu-tco: error: {_safe(str(where))[:200] + ': ' if where is not None else ''}"
              f"{_safe(err.strerror or str(err))}{room}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if os.environ.get("GPU_TCO_DEBUG"):
        raise err
    print(f"gpu-tco: internal error: {type(err).__name__}: {_safe(str(err))[:200]} "
          "(please report it; GPU_TCO_DEBUG=1 shows the details)", file=sys.stderr)
    return 1


_NO_ROOM = {getattr(errno, name) for name in ("ENOSPC", "EFBIG", "EDQUOT") if hasattr(errno, name)}


if __name__ == "__main__":
    sys.exit(main())
