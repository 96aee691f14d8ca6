"""Layering: front ends -> core, never the reverse; no import cycles inside core; one namespace."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDER_OF = {"gpu_tco": "installer", "gpu_tco.commands": "installer/commands", "gpu_tco.core": "core", "gpu_tco.addin": "addin",
             "gpu_tco.gui": "gui", "gpu_tco.workbooks": "workbooks"}
FRONT_ENDS = ("gpu_tco.cli", "gpu_tco.commands", "gpu_tco.bench", "gpu_tco.addin", "gpu_tco.gui", "gpu_tco.workbooks")
NOT_IN_CORE = ("openpyxl", "xlwings", "PySide6", "matplotlib")


def _imports(package: str, path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (function-local imports too), as absolute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = f"{package}.{path.stem}" if path.stem != "__init__" else package
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: -node.level] if path.stem != "__init__" else here.split(".")[: len(here.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # "from . import catalog" imports a module
    return found


def _modules(package: str) -> dict[str, set[str]]:
    folder = ROOT / FOLDER_OF[package]
    return {(f"{package}.{p.stem}" if p.stem != "__init__" else package): _imports(package, p) for p in folder.glob("*.py")}


@pytest.mark.slow  # over 0.45 s
def test_core_imports_no_front_end_and_no_front_end_library():
    for module, imports in _modules("gpu_tco.core").items():
        bad = {i for i in imports if i.startswith(FRONT_ENDS) or i.split(".")[0] in NOT_IN_CORE}
        assert not bad, (module, bad)


@pytest.mark.slow  # over 0.45 s
def test_no_import_cycles_inside_core():
    graph = _modules("gpu_tco.core")
    names = set(graph)
    edges = {m: {i for i in imps if i in names and i != m and i != "gpu_tco.core"} for m, imps in graph.items() if m != "gpu_tco.core"}
    assert _cycle(edges) is None, " -> ".join(_cycle(edges))


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``edges`` ({module: modules it imports}) as [a, b, ..., a], or None."""
    for start in sorted(edges):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    return path + [start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    return None


def _project_imports() -> dict[str, set[str]]:
    """Every module of the project (all five folders) and the project's modules it imports anywhere in it
    (function-local imports too).  A module's own enclosing packages are left out: Python has started
    importing them before the module, whatever the module imports."""
    graph = {m: imps for package in FOLDER_OF for m, imps in _modules(package).items()}
    return {m: {i for i in imps if i in graph and i != m and not m.startswith(i + ".")} for m, imps in graph.items()}


@pytest.mark.slow  # over 0.45 s
def test_no_import_cycles_among_the_projects_modules():
    """No module of the project imports, through any chain, a module that imports it back (the training and the
    serving workbook share workbooks/common.py instead of importing each other)."""
    edges = _project_imports()
    assert {"gpu_tco.workbooks.build", "gpu_tco.workbooks.serving_book", "gpu_tco.cli", "gpu_tco.gui.window"} <= set(edges)
    assert "gpu_tco.workbooks.common" in edges["gpu_tco.workbooks.serving_book"]
    assert "gpu_tco.workbooks.build" not in edges["gpu_tco.workbooks.serving_book"]
    assert _cycle(edges) is None, " -> ".join(_cycle(edges))


def test_the_cycle_check_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "d": {"a"}}) is None


@pytest.mark.slow  # over 0.45 s
def test_qt_is_imported_only_by_the_desktop_form():
    for package in FOLDER_OF:
        if package == "gpu_tco.gui":
            continue
        for module, imports in _modules(package).items():
            assert not any(i.split(".")[0] == "PySide6" for i in imports), module


def test_front_ends_hold_no_formulas():
    """Formulas are expression trees in core.formulas; front ends never build them."""
    for package in ("gpu_tco.addin", "gpu_tco.workbooks", "gpu_tco.gui", "gpu_tco"):
        for module, imports in _modules(package).items():
            assert not any(i.startswith("gpu_tco.core.expr.") and i.split(".")[-1] in {"IF", "MIN", "MAX", "CEILING", "Ref", "Lookup"}
                           for i in imports), module


def test_one_namespace_nothing_else_importable_from_the_checkout():
    """The folders install as gpu_tco.*; the conftest keeps the checkout off sys.path, so the old top-level names are gone."""
    for name in ("core", "addin", "workbooks", "gui"):
        assert importlib.util.find_spec(name) is None, name
    import gpu_tco
    assert {"evaluate", "plan", "explain", "breakdown", "InputError", "CatalogError", "GpuTcoError", "__version__"} <= set(dir(gpu_tco))
    assert issubclass(gpu_tco.InputError, gpu_tco.GpuTcoError) and issubclass(gpu_tco.CatalogError, ValueError)


def test_importing_the_engine_loads_no_front_end_library():
    """pandas is read only when a Series comes in, openpyxl only by the workbook: neither loads with gpu_tco."""
    import subprocess
    import sys
    code = "import sys, gpu_tco; gpu_tco.evaluate(); print(sorted(m for m in ('pandas', 'openpyxl', 'xlwings', 'PySide6') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


# The front ends ("doors"): every Python file of the command line, the workbook, the Excel functions and the
# form.  installer/ also holds install_addin.py (standard library only) and frozen_form.py (starts the form):
# neither imports core, and checking them costs nothing, so the whole folder counts.
DOORS = ("gpu_tco", "gpu_tco.commands", "gpu_tco.gui", "gpu_tco.workbooks", "gpu_tco.addin")
# attribute reads through core outside its public API allowed for now, as {(module, attribute)}; none is needed
# (test_the_allowances_are_still_needed says when one goes stale)
ATTRIBUTE_ALLOWANCES: set[tuple[str, str]] = set()


def _core_reaches(module: str, source: str, public: set[str]) -> list[tuple[str, int, str]]:
    """(module, line, what) for each use of core outside its public API in ``source``: an import from a core
    module (``from gpu_tco.core.planner import plan``, ``from ..core.planner import plan``, ``import
    gpu_tco.core.engine``), a name imported from the package that ``__all__`` does not list (``from
    gpu_tco.core import engine``), or an attribute read through the package (``core.engine.row_of``)."""
    tree = ast.parse(source)
    package = module if module in FOLDER_OF else module.rsplit(".", 1)[0]
    found, core_names = [], set()  # names bound to the gpu_tco.core package in this file
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("gpu_tco.core."):
                    found.append((module, node.lineno, f"import {a.name}"))
                elif a.name == "gpu_tco.core" and a.asname:
                    core_names.add(a.asname)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("gpu_tco.core."):
                found.append((module, node.lineno, f"from {target} import ..."))
            elif target == "gpu_tco.core":
                found += [(module, node.lineno, f"from gpu_tco.core import {a.name}") for a in node.names if a.name not in public]
            elif target == "gpu_tco":
                core_names |= {a.asname or a.name for a in node.names if a.name == "core"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.attr.startswith("__"):
            continue
        through = node.value
        if isinstance(through, ast.Attribute) and isinstance(through.value, ast.Name) and through.value.id == "gpu_tco" \
                and through.attr == "core":  # gpu_tco.core.X
            name = "gpu_tco.core"
        elif isinstance(through, ast.Name) and through.id in core_names:  # core.X
            name = through.id
        else:
            continue
        if node.attr not in public and (module, node.attr) not in ATTRIBUTE_ALLOWANCES:
            found.append((module, node.lineno, f"{name}.{node.attr}"))
    return found


def _door_files():
    for package in DOORS:
        for path in sorted((ROOT / FOLDER_OF[package]).glob("*.py")):
            yield (f"{package}.{path.stem}" if path.stem != "__init__" else package), path


def test_front_ends_use_only_the_public_api_of_core():
    """A door imports from gpu_tco.core (the package) only, and only what its __all__ lists, so a module
    inside core can be renamed or split without breaking a front end."""
    import gpu_tco.core
    public = set(gpu_tco.core.__all__)
    files = dict(_door_files())
    assert {"gpu_tco.cli", "gpu_tco.commands.plan", "gpu_tco.bench", "gpu_tco.addin.udfs", "gpu_tco.gui.model",
            "gpu_tco.workbooks.build"} <= set(files)
    reaches = [r for module, path in files.items() for r in _core_reaches(module, path.read_text(encoding="utf-8"), public)]
    assert not reaches, "\n".join(f"{m} line {n}: {what}" for m, n, what in reaches)


def test_generated_add_in_code_uses_only_the_public_api_of_core():
    """The generator's output, not only the committed udfs.py: the classic module and xlwings Lite's main.py."""
    import gpu_tco.core
    from gpu_tco.addin import codegen, lite
    public = set(gpu_tco.core.__all__)
    for module, source in (("gpu_tco.addin.udfs", codegen.classic_module()), ("gpu_tco.addin.lite_main", lite.main_py())):
        assert "import" in source and not _core_reaches(module, source, public), module


def test_the_structure_check_sees_every_kind_of_reach():
    """The check itself: each way of reaching past the public API is caught, and the public way is not."""
    public = {"plan", "catalog", "evaluate"}
    caught = {
        "from gpu_tco.core.planner import plan": 1, "from ..core.planner import plan": 1, "from ..core import engine": 1,
        "import gpu_tco.core.engine": 1, "from gpu_tco import core\ncore.engine.row_of({}, 'gpu')": 1,
        "import gpu_tco.core\ngpu_tco.core.engine.evaluate()": 1, "import gpu_tco.core as c\nc.planner.plan()": 1,
        "from gpu_tco.core import plan, catalog\nfrom gpu_tco import core\ncore.evaluate(); core.__file__": 0,
        "from .. import core\ncore.plan()": 0,
    }
    for source, count in caught.items():
        assert len(_core_reaches("gpu_tco.gui.model", source, public)) == count, source


def test_the_allowances_are_still_needed():
    for module, attribute in ATTRIBUTE_ALLOWANCES:
        path = dict(_door_files())[module]
        assert f"core.{attribute}." in path.read_text(encoding="utf-8"), f"{module} no longer reads core.{attribute}: drop its allowance"


def test_every_public_name_of_core_exists():
    """__all__ lists only what the package has (the names loaded on first use included)."""
    import gpu_tco.core
    assert len(set(gpu_tco.core.__all__)) == len(gpu_tco.core.__all__)
    assert [n for n in gpu_tco.core.__all__ if not hasattr(gpu_tco.core, n)] == []


# --- units a reader can hold ----------------------------------------------------------------------------------
MAX_FUNCTION_LINES = 80
UNIT_FOLDERS = ("core", "addin", "gui", "workbooks", "installer")
# Functions allowed past MAX_FUNCTION_LINES, each with the reason splitting would hurt reading, as
# {("folder/file.py", "Class.method" or "function"): "why"}.  None is needed today.
LONG_FUNCTIONS: dict[tuple[str, str], str] = {}


def _function_lengths(source: str) -> dict[str, int]:
    """Lines of every function and method in ``source`` (decorators and docstring included), by qualified name
    (``Class.method``, ``outer.inner``)."""
    lengths: dict[str, int] = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    lengths[name] = child.end_lineno - first + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)
    visit(ast.parse(source), "")
    return lengths


def _unit_files():
    for folder in UNIT_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if "GENERATED by" not in source[:1000]:  # generated code (addin/udfs.py) is read through its generator
                yield path.relative_to(ROOT).as_posix(), source


@pytest.mark.slow  # over 0.45 s
def test_no_function_is_longer_than_a_reader_can_hold():
    long = [(path, name, n) for path, source in _unit_files() for name, n in _function_lengths(source).items()
            if n > MAX_FUNCTION_LINES and (path, name) not in LONG_FUNCTIONS]
    assert not long, "\n".join(f"{p} {name}: {n} lines (at most {MAX_FUNCTION_LINES}: split it, or allow it in "
                               f"LONG_FUNCTIONS saying why)" for p, name, n in long)


@pytest.mark.slow  # over 0.45 s
def test_the_long_function_allowances_are_still_needed():
    lengths = {(path, name): n for path, source in _unit_files() for name, n in _function_lengths(source).items()}
    stale = [key for key in LONG_FUNCTIONS if lengths.get(key, 0) <= MAX_FUNCTION_LINES]
    assert not stale, f"no longer over {MAX_FUNCTION_LINES} lines (or gone): drop from LONG_FUNCTIONS: {stale}"


def test_the_length_check_measures_nested_functions_and_methods():
    source = "class A:\n    @staticmethod\n    def m():\n        def inner():\n            pass\n        return 1\n"
    assert _function_lengths(source) == {"A.m": 5, "A.m.inner": 2}


# ---------------------------------------------------------------------------
# state, hints and numbers: one place each

PRODUCT_FOLDERS = ("core", "addin", "gui", "workbooks", "installer")


def _product_files():
    for folder in PRODUCT_FOLDERS:
        yield from sorted((ROOT / folder).glob("*.py"))


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring (f-string parts included)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.slow  # over 0.45 s
def test_the_catalog_snapshot_is_the_only_module_state_rebound_at_run_time():
    """No function rebinds a module-level name (a ``global`` statement) except the catalog's, which rebinds
    its one reference to the current snapshot; caches live in that snapshot, not in module dictionaries."""
    found = []
    for path in _product_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found += [(path.relative_to(ROOT).as_posix(), node.lineno, name) for name in node.names]
        for node in tree.body:  # module-level names of an empty dict or list are filled later: caches in disguise
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, (ast.Dict, ast.List)) \
                    and not getattr(node.value, "keys", getattr(node.value, "elts", None)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found += [(path.relative_to(ROOT).as_posix(), node.lineno, t.id) for t in targets if isinstance(t, ast.Name)]
    allowed = {("core/catalog.py", "_SNAPSHOT"), ("core/formulas.py", "QUANTITIES")}  # QUANTITIES: filled while formulas.py loads
    assert {(f, n) for f, _, n in found} <= allowed, [x for x in found if (x[0], x[2]) not in allowed]
    assert ("core/catalog.py", "_SNAPSHOT") in {(f, n) for f, _, n in found}  # the check sees a global statement


@pytest.mark.slow  # over 0.45 s
def test_close_match_hints_and_whole_numbers_are_worded_in_one_place():
    """ "did you mean" is written only by core.text.did_you_mean, and the rule "a whole number below 1e15 shows
    without decimals" lives only in core.text.is_whole_number; nothing else calls difflib's close matches."""
    worded, rule, difflib_calls = [], [], []
    for path in _product_files():
        name = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        worded += [(name, line) for line, text in _strings(tree) if "did you mean" in text.lower()]
        rule += [(name, n) for n, line in enumerate(source.splitlines(), 1) if "is_integer()" in line and "1e15" in line]
        difflib_calls += [(name, node.lineno) for node in ast.walk(tree)
                          if isinstance(node, ast.Attribute) and node.attr == "get_close_matches"]
    assert {n for n, _ in worded} == {"core/text.py"}, worded
    assert not rule and not difflib_calls, (rule, difflib_calls)


def test_operator_precedence_and_precision_have_their_own_names():
    """``prec`` is the precision lookup of formulas.py; an expression's operator precedence is ``precedence``."""
    from gpu_tco.core import expr
    assert hasattr(expr.Expr, "precedence") and not hasattr(expr.Expr, "prec")
    assert "prec = lambda" in (ROOT / "core" / "formulas.py").read_text(encoding="utf-8")


def test_the_command_line_is_a_small_dispatcher_with_one_module_per_command():
    """installer/cli.py parses and dispatches; each command's handler lives in a module of its own under
    installer/commands/ (gpu_tco.commands), named for the command it runs."""
    cli = ROOT / "installer" / "cli.py"
    tree = ast.parse(cli.read_text(encoding="utf-8"))
    assert not [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("cmd_")]
    assert len(cli.read_text(encoding="utf-8").splitlines()) < 300
    handlers = {n.id for d in ast.walk(tree) if isinstance(d, ast.Dict) for n in d.values if isinstance(n, ast.Name)}
    assert {"cmd_main", "cmd_estimate", "cmd_plan", "cmd_offers", "cmd_workbook"} <= handlers
    defined: dict[str, str] = {}
    for path in (ROOT / "installer" / "commands").glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("cmd_"):
                assert node.name not in defined, (node.name, path.stem, defined.get(node.name))
                defined[node.name] = path.stem
    assert handlers <= set(defined), handlers - set(defined)
    assert defined["cmd_plan"] == "plan" and defined["cmd_estimate"] == "estimate" and defined["cmd_workbook"] == "workbook"
    assert len(set(defined.values())) >= 8  # one module per command (or per pair: tco and breakeven, the catalogs)
