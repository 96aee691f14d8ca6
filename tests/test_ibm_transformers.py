"""IBM's fms-acceleration benchmark (plain fms-hf-tuning: the Hugging Face Trainer with TRL and PEFT on A100 80GB,
February 2025, scripts/benchmarks/refs/a100_80gb.csv at commit 24bdadb) checks the transformers model held out
(docs/training.md, "Hugging Face transformers on A100s")."""
import statistics

from gpu_tco.core import calibration as cal
from gpu_tco.core.references import REFERENCES

IBM = [m for m in cal.load_measurements() if m.source == "fms_acceleration_bench"]


def _error(m):
    return cal.predict(m) / m.value - 1


def test_the_rows_are_transformers_checks_with_whole_job_tokens():
    """Every row runs under transformers and is a check, not fitted; the Trainer's tokens per second are per GPU, so a
    two-GPU row holds twice the published figure (Mistral 7B full fine-tuning, two GPUs, batch 2: 2,777.18 per GPU)."""
    assert len(IBM) == 38 and REFERENCES["fms_acceleration_bench"].url.endswith("a100_80gb.csv")
    assert {m.inputs["framework"] for m in IBM} == {"transformers"} and not any(cal.in_fit(m) for m in IBM)
    two = next(m for m in IBM if m.id == "fms-mistral7b-full-2xa100-b2-speed")
    assert two.value == 5554.4 and two.inputs["n_gpus"] == 2 and two.inputs["sharding"] == "zero3"


def test_full_fine_tuning_speed_and_step_phase_memory_hold():
    """Full fine-tuning of Mistral 7B: speed within 6 % on one and two GPUs; memory within 2 % where the optimizer step
    (weights, gradients, both AdamW states and foreach's temporary) sets the peak."""
    full = [m for m in IBM if "-full-" in m.id]
    assert len(full) == 8
    for m in full:
        if m.kind == "training speed" or m.id.endswith(("1xa100-b4-mem", "2xa100-b2-mem")):
            assert abs(_error(m)) < (0.06 if m.kind == "training speed" else 0.02), (m.id, _error(m))


def test_what_the_check_finds_missing_is_visible():
    """The two gaps the check shows, kept visible so that a change that closes them is seen: at 16,384 and 32,768 tokens
    a GPU the model still counts every gradient beside the activations (the Trainer has freed them: 17-20 % over), and
    Mistral 7B's LoRA runs 17-31 % slower than modelled."""
    by_id = {m.id: _error(m) for m in IBM}
    assert 0.15 < by_id["fms-mistral7b-full-1xa100-b8-mem"] < 0.25 and 0.15 < by_id["fms-mistral7b-full-2xa100-b4-mem"] < 0.25
    lora = [e for i, e in by_id.items() if i.startswith("fms-mistral7b-lora") and i.endswith("speed")]
    assert len(lora) == 4 and all(0.15 < e < 0.35 for e in lora)
    speed = [abs(e) for i, e in by_id.items() if i.endswith("speed")]
    assert statistics.median(speed) < 0.12
