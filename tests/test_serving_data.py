"""The serving measurements in data/measurements.csv: published batched-serving results (output tokens per second
under load, time to first token, time per output token), each with its workload and a source.  They load and are
checked like the other rows; the serving model is fitted on them."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import calibration as cal
from gpu_tco.core import catalog
from gpu_tco.core.references import REFERENCES

SERVING = cal.serving_measurements()


def test_at_least_fifteen_rows_from_three_sources_with_their_workload():
    assert len(SERVING) >= 15
    sources = {m.source for m in SERVING}
    assert len(sources) >= 3
    root = Path(__file__).resolve().parents[1]
    for s in sources:
        # a published source has its address; the project's own measurement, the results file in this repository
        assert REFERENCES[s].addressed(root) and REFERENCES[s].year[:4].isdigit(), s
    assert {m.quantity for m in SERVING} == {"decode_tokens_per_s", "ttft_ms", "tpot_ms"}
    for m in SERVING:
        i = m.inputs
        assert catalog.models().find(i["model"]) is not None and catalog.gpus().find(i["gpu"]) is not None, m.id
        assert "output_tokens" in i and i.get("weights_dtype"), m.id
        # a load: the concurrency the client held, every request at once, or an arrival rate
        assert ("batch" in i) + (i.get("offline") == 1) + ("requests_per_s" in i) == 1, m.id
        assert m.unit == ("tokens/s" if m.quantity == "decode_tokens_per_s" else "ms"), m.id
        assert m.date[:4].isdigit() and m.recipe, m.id
    # settings that matter to batched serving are covered: mixture of experts, several GPUs, FP8 and FP4, replicas
    assert {"Qwen3-235B-A22B", "Llama-4-Maverick", "gpt-oss-20b"} <= {m.inputs["model"] for m in SERVING}
    assert {"fp8", "nvfp4", "mxfp4", "bf16"} <= {m.inputs["weights_dtype"] for m in SERVING}
    assert any(m.inputs["n_gpus"] == 8 for m in SERVING) and any(m.inputs.get("replicas", 1) > 1 for m in SERVING)


def test_the_fitted_set_is_unchanged_by_the_serving_rows():
    assert not {m.kind for m in cal.load_measurements()} & set(cal.SERVING_KINDS)
    assert len(cal.load_measurements(include_serving=True)) == len(cal.load_measurements()) + len(SERVING)


def _file_with(tmp_path, **changes):
    with open(cal.MEASUREMENTS_PATH, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    row = next(r for r in rows if r["id"] == "gpustack-qwen3-8b-h100-c8-tps")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerow({**row, **changes})
    path = tmp_path / "measurements.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


@pytest.mark.parametrize("changes, message", [
    ({"quantity": "itl_ms"}, r"measurements.csv line 2: quantity: .*allowed: .*ttft_ms, tpot_ms"),
    ({"other_inputs": "weights_dtype=bf16;offline=2;output_tokens=220"}, r"measurements.csv line 2: offline: .*allowed: 0 or 1"),
    ({"other_inputs": "weights_dtype=bf16;batch=8;prompt_tokens=-5"}, r"measurements.csv line 2: prompt_tokens: .*allowed: a number >"),
    ({"other_inputs": "weights_dtype=bf17;batch=8"}, r"weights_dtype"),
])
def test_a_bad_serving_row_is_refused_in_one_line(tmp_path, changes, message):
    with pytest.raises(core.InputError, match=message) as err:
        cal.load_measurements(_file_with(tmp_path, **changes), include_serving=True)
    assert "\n" not in str(err.value)
