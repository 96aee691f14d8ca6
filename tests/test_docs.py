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
