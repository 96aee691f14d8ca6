"""docs/quantities.md is generated from the declarations and must not go stale."""
from gpu_tco.core import docs
from gpu_tco.core.formulas import QUANTITIES
from gpu_tco.core.inputs import INPUTS


def test_quantities_reference_is_in_sync():
    on_disk = docs.DOC_PATH.read_text(encoding="utf-8")
    assert on_disk == docs.render(), "docs/quantities.md is stale: run `gpu-tco docs`"


def test_reference_lists_every_input_and_quantity_with_both_formulas():
    text = docs.render()
    for inp in INPUTS:
        assert f"| `{inp.name}` |" in text
    for name, q in QUANTITIES.items():
        assert f"#### `{name}` ({q.unit})" in text
        assert f"- Excel: `={q.expr.xl()}`" in text


# --- every source resolvable ---------------------------------------------------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

from gpu_tco.core import catalog  # noqa: E402
from gpu_tco.core.references import REFERENCES, keys_in, resolve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ["core", "addin", "workbooks", "gui", "installer", "docs", "examples", "README.md"]
POINTERS = re.compile(r"\.\./shared|notes/(estimation|costs|toolchain)\.md|\bseed ?00\d|\bissue [0-9]+\b|public repo", re.I)


def _catalog_rows():
    for name, table in catalog.tables().items():
        for row in table.rows[:table.file_rows]:
            yield name, row


def test_every_cited_key_resolves_to_a_full_citation():
    texts = [(f"quantity {n}", q.source) for n, q in QUANTITIES.items()] + [(f"input {i.name}", i.source) for i in INPUTS]
    texts += [(f"{t}.csv {r['name']}", r.get("source", "")) for t, r in _catalog_rows()]
    cited = set()
    for where, text in texts:
        for key in keys_in(text):
            assert resolve(key), (where, key)
            cited.add(key)
    assert len(cited) >= 60
    assert all(ref.addressed(ROOT) and ref.title and ref.year for ref in REFERENCES.values())


def test_every_catalog_row_names_a_resolvable_source():
    for table, row in _catalog_rows():
        if row["name"] == "none":  # the placeholder offer
            continue
        source = row.get("source", "")
        assert keys_in(source) or "https://" in source, (table, row["name"], source)


def test_no_product_file_points_outside_the_repository():
    hits = []
    for part in PRODUCT:
        path = ROOT / part
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() and p.suffix in (".py", ".csv", ".md", ".toml", ".json", ".txt")]
        for f in files:
            for i, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
                if POINTERS.search(line):
                    hits.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not hits, hits[:10]


def test_explain_and_docs_print_full_citations():
    from gpu_tco import core
    source = core.explain("kv_bytes_per_token")["source"]
    assert "https://arxiv.org/abs/2309.06180" in source and "[" not in source
    text = docs.render()
    assert "https://arxiv.org/abs/2205.05198" in text and "## References" in text


# --- the form's picture in the README ----------------------------------------------------------------

def test_form_picture_shows_todays_answer(qtbot, tmp_path, monkeypatch):
    """docs/form.png (written by `gpu-tco docs`) against the form as it answers now, with the same scenario,
    size and built-in catalogs.  Compared in words, not pixels: fonts and anti-aliasing differ between
    machines, so a pixel comparison would fail on a correct picture; the answer the picture shows (headline
    and key figures, stored in the PNG by --screenshot) is what goes stale when the formulas or catalogs change."""
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QImage

    from gpu_tco.commands import tools
    from gpu_tco.gui.app import ANSWER_KEY
    from gpu_tco.gui.controller import Controller
    from gpu_tco.gui.window import MainWindow
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    picture = QImage(str(docs.DOC_PATH.parent / tools.FORM_PICTURE))
    assert f"{picture.width()}x{picture.height()}" == tools.FORM_PICTURE_SIZE
    w = MainWindow(Controller(), QSettings(str(tmp_path / "form.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.resize(*map(int, tools.FORM_PICTURE_SIZE.split("x")))
    with qtbot.waitSignal(w.controller.answered, timeout=20_000):
        assert w.open_file(str(ROOT / tools.FORM_PICTURE_SCENARIO))
    shown = picture.text(ANSWER_KEY)
    assert shown.startswith("Recommended:")
    assert shown == w.answer_text(), "docs/form.png is stale: run `gpu-tco docs`"


# --- README and docs/: short, linked, and every figure from its source ------------------------------------------

from gpu_tco import figures  # noqa: E402

README_MAX_LINES = 300
# docs/*.md that other parts of the project write (training frameworks, buying, model architectures, benchmarks):
# README links them by name; a link to one of these may point to a file not written yet
PLANNED_DOCS = {"docs/buying.md", "docs/training.md", "docs/models.md", "docs/benchmarks.md"}
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# a count of catalog rows, measurements, sources, pages or sizes written outside the figure markers
BARE_FIGURE = re.compile(r"\b\d[\d,.]*\s+(?:dated\s+|published\s+|whole\s+|cloud\s+)*"
                         r"(?:GPU types|offers|measurements|sources|models|pages|KB|MB|tests|rows)\b(?!/)")


def test_readme_is_a_short_page_with_the_quick_start_and_a_door_each():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    quick = text[text.index("## Quick start"):]
    block = quick[quick.index("```\n") + 4:quick.index("\n```", quick.index("```\n") + 4)].splitlines()
    assert block == ["python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/gpu-tco",
                     "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python tests/prepare.py && "
                     "CI=\"${CI:-}\" .venv/bin/python -m pytest -q"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "/^## Quick start/" in ci and "sed -n 2p" in ci  # .ci/run runs the block's second line
    for door in ("**Command line**", "**Python**", "**Excel**", "**The desktop form**", "**The workbook**", "**E-mail**"):
        assert door in text, door
    limits = text[text.index("## Limitations"):text.index("## Documentation")]
    assert "not model" in limits and "median error" in limits and "<!-- figure: training_median -->" in limits


def test_every_link_of_readme_and_docs_resolves_and_every_doc_is_linked():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set()
    for path in figures.hand_written():
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            resolved = (path.parent / target).resolve().relative_to(ROOT).as_posix()
            linked.add(resolved)
            assert (ROOT / resolved).exists() or resolved in PLANNED_DOCS, f"{path.name}: {target}"
    written = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert written <= {t for t in LINK.findall(readme)}, written - set(LINK.findall(readme))


def test_figures_in_readme_and_docs_are_their_sources():
    """Every marked figure shows what its source gives today (`gpu-tco docs` rewrites them)."""
    values = figures.figures()
    assert figures.stale(values) == []
    from gpu_tco.core import catalog
    assert values["offers"] == f"{len([r for r in catalog.tables()['offers'].rows if r['name'] != 'none']):,}"
    text = "\n".join(p.read_text(encoding="utf-8") for p in figures.hand_written())
    assert {m.group(1) for m in figures.FIGURE.finditer(text)} == set(values)  # no figure computed for nothing


def test_no_count_is_stated_outside_the_figure_markers():
    found = []
    for path in figures.hand_written():
        for i, line in enumerate(figures.FIGURE.sub("", path.read_text(encoding="utf-8")).splitlines(), start=1):
            found += [f"{path.name}:{i}: {m.group(0)}" for m in BARE_FIGURE.finditer(line)]
    assert not found, found


def test_figure_markers_are_filled_and_checked():
    text = "a <!-- figure: offers -->1<!-- /figure --> b"
    assert figures.fill(text, {"offers": "104"}) == "a <!-- figure: offers -->104<!-- /figure --> b"
    assert BARE_FIGURE.search("a catalog of 103 cloud offers") and not BARE_FIGURE.search("800 KB/token")
