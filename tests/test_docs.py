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
    assert all(ref.url.startswith("https://") and ref.title and ref.year for ref in REFERENCES.values())


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

    from gpu_tco import cli
    from gpu_tco.gui.app import ANSWER_KEY
    from gpu_tco.gui.controller import Controller
    from gpu_tco.gui.window import MainWindow
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    picture = QImage(str(docs.DOC_PATH.parent / cli.FORM_PICTURE))
    assert f"{picture.width()}x{picture.height()}" == cli.FORM_PICTURE_SIZE
    w = MainWindow(Controller(), QSettings(str(tmp_path / "form.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.resize(*map(int, cli.FORM_PICTURE_SIZE.split("x")))
    with qtbot.waitSignal(w.controller.answered, timeout=20_000):
        assert w.open_file(str(ROOT / cli.FORM_PICTURE_SCENARIO))
    shown = picture.text(ANSWER_KEY)
    assert shown.startswith("Recommended:")
    assert shown == w.answer_text(), "docs/form.png is stale: run `gpu-tco docs`"
