"""Layering: front ends -> core, never the reverse; no import cycles inside core; one namespace."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER_OF = {"gpu_tco": "installer", "gpu_tco.core": "core", "gpu_tco.addin": "addin", "gpu_tco.gui": "gui",
             "gpu_tco.workbooks": "workbooks"}
FRONT_ENDS = ("gpu_tco.cli", "gpu_tco.bench", "gpu_tco.addin", "gpu_tco.gui", "gpu_tco.workbooks")
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


def test_core_imports_no_front_end_and_no_front_end_library():
    for module, imports in _modules("gpu_tco.core").items():
        bad = {i for i in imports if i.startswith(FRONT_ENDS) or i.split(".")[0] in NOT_IN_CORE}
        assert not bad, (module, bad)


def test_no_import_cycles_inside_core():
    graph = _modules("gpu_tco.core")
    names = set(graph)
    edges = {m: {i for i in imps if i in names and i != m and i != "gpu_tco.core"} for m, imps in graph.items() if m != "gpu_tco.core"}

    def cycle_from(start):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == start:
                    return path + [start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
        return None

    cycles = [c for c in (cycle_from(m) for m in edges) if c]
    assert not cycles, cycles[0]


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
