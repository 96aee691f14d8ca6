"""Models from a Hugging Face config.json: published configs (tests/data/hf_configs, sources in its README)
reproduce their published parameter counts, and give the same answer as the catalog model they describe;
paths, folders, the local Hugging Face cache, scenario files, the command line and the Excel functions."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import catalog, hf_config
from gpu_tco.core.engine import resolve_inputs, row_of
from gpu_tco.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "hf_configs"

# config folder -> the catalog model it describes (its params_published_b is the published total, cited in models.csv)
IN_CATALOG = {
    "Llama-2-7b-hf": "Llama-2-7B", "Llama-3.1-8B": "Llama-3.1-8B", "Mistral-7B-v0.1": "Mistral-7B",
    "Mixtral-8x7B-v0.1": "Mixtral-8x7B", "Qwen2.5-7B": "Qwen2.5-7B", "Qwen3-30B-A3B": "Qwen3-30B-A3B",
    "gemma-2-9b": "Gemma-2-9B", "gemma-3-27b-pt": "Gemma-3-27B", "DeepSeek-V3": "DeepSeek-V3", "gpt-oss-20b": "gpt-oss-20b",
    "Llama-4-Scout-17B-16E": "Llama-4-Scout",
}
# published totals of models the catalog does not hold (billions)
PUBLISHED_B = {
    # DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
    # arXiv:2405.04434, 2024-05-07, section "DeepSeek-V2-Lite": 15.7B total parameters
    "DeepSeek-V2-Lite": 15.7,
    # Qwen Team, "Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated Parameters", 2024-03-28,
    # https://qwenlm.github.io/blog/qwen-moe/: 14.3B total parameters, 2.7B activated
    "Qwen1.5-MoE-A2.7B": 14.3,
}
# a config's max_position_embeddings where the catalog gives the model card's native context instead
CONTEXT_DIFFERS = {"Qwen2.5-7B", "Qwen3-30B-A3B"}


def _config(folder: str) -> str:
    return str(CONFIGS / folder / "config.json")


def test_every_stored_config_is_cited_in_the_folder_readme():
    readme = (CONFIGS / "README.md").read_text(encoding="utf-8")
    folders = sorted(p.name for p in CONFIGS.iterdir() if p.is_dir())
    assert len(folders) >= 8 and set(folders) == set(IN_CATALOG) | set(PUBLISHED_B)
    for folder in folders:
        assert f"`{folder}/config.json`" in readme, folder


@pytest.mark.parametrize("folder", sorted(IN_CATALOG) + sorted(PUBLISHED_B))
def test_config_reproduces_the_published_total_within_one_percent(folder):
    published = PUBLISHED_B.get(folder) or catalog.models().row(IN_CATALOG.get(folder, folder))["params_published_b"]
    total = core.evaluate({"model": _config(folder)}, outputs=["params_total_b"])["params_total_b"]
    assert abs(total - published) / published < 0.01, (folder, total, published)


def test_moe_configs_give_their_published_active_counts():
    # the publishers count the input embedding as active (params_active, which compute uses, leaves the lookup out)
    active = lambda folder: core.evaluate({"model": _config(folder)}, outputs=["params_active_incl_embedding_b"])[  # noqa: E731
        "params_active_incl_embedding_b"]
    # Mixtral: "13B active" (Jiang et al., "Mixtral of Experts", arXiv:2401.04088, 2024-01-08); DeepSeek-V3: 37B
    # (DeepSeek-V3 Technical Report, arXiv:2412.19437); Qwen1.5-MoE: 2.7B activated (Qwen blog above)
    assert active("Mixtral-8x7B-v0.1") == pytest.approx(12.9, rel=0.01)
    assert active("DeepSeek-V3") == pytest.approx(37.5, rel=0.015)
    assert active("Qwen1.5-MoE-A2.7B") == pytest.approx(2.7, rel=0.01)


@pytest.mark.parametrize("folder", sorted(IN_CATALOG))
def test_config_gives_the_same_answer_as_the_catalog_model(folder):
    name = IN_CATALOG[folder]
    from_config = row_of(resolve_inputs({"model": _config(folder)}), "model")
    listed = catalog.models().row(name)
    skip = {"params_published_b"} | ({"max_context"} if folder in CONTEXT_DIFFERS else set())
    for field in catalog.models().numeric:
        if field not in skip:
            assert float(from_config[field]) == float(listed[field]), (folder, field)
    a, b = core.evaluate({"model": _config(folder)}), core.evaluate({"model": name})
    assert a.keys() == b.keys() and len(a) > 100
    # a config whose context length differs from the catalog's (a published extension) differs in what reads it
    reads_context = {"model_context_limit", "max_context_fit"} if folder in CONTEXT_DIFFERS else set()
    assert [k for k in a if a[k] != b[k] and k not in reads_context] == []
    assert "config.json" in from_config["source"] and from_config["family"]


def test_a_folder_and_the_local_hub_cache_are_read(tmp_path, monkeypatch):
    # a folder holding config.json, named relative to the working folder
    monkeypatch.chdir(CONFIGS)
    row = row_of(resolve_inputs({"model": "./DeepSeek-V2-Lite"}), "model")
    assert row["name"] == "DeepSeek-V2-Lite (config.json)" and row["kv_lora_rank"] == 512 and row["q_lora_rank"] == 0
    # a Hub id found in the Hugging Face cache layout (models--org--name/snapshots/<revision>/config.json)
    snap = tmp_path / "hub" / "models--deepseek-ai--DeepSeek-V2-Lite" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    shutil.copy(CONFIGS / "DeepSeek-V2-Lite" / "config.json", snap / "config.json")
    (snap.parents[1] / "refs").mkdir()
    (snap.parents[1] / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    row = row_of(resolve_inputs({"model": "deepseek-ai/DeepSeek-V2-Lite"}), "model")
    assert row["name"] == "deepseek-ai/DeepSeek-V2-Lite" and "local Hugging Face cache" in row["source"]
    assert core.evaluate(model="deepseek-ai/DeepSeek-V2-Lite", outputs=["params_total_b"])["params_total_b"] == pytest.approx(15.7, rel=0.01)
    # HF_HOME/hub is the next place; an id in neither place is an unknown name (no network is tried offline)
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert hf_config.cached_config("deepseek-ai/DeepSeek-V2-Lite") == snap / "config.json"
    with pytest.raises(InputError, match="unknown"):
        resolve_inputs({"model": "someone/not-a-model"})
    # a catalog name is still the catalog's row, also when the cache holds it
    assert row_of(resolve_inputs({"model": "Qwen/Qwen2.5-7B"}), "model")["name"] == "Qwen2.5-7B"


def test_bad_configs_give_one_line_naming_the_field(tmp_path):
    def error(cfg) -> str:
        p = tmp_path / "config.json"
        p.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg))
        with pytest.raises(InputError) as err:
            core.evaluate(model=str(p))
        text = str(err.value)
        assert "\n" not in text and "Traceback" not in text
        return text

    unknown = error({"model_type": "mamba", "hidden_size": 768})
    assert "model_type 'mamba'" in unknown and "layers, hidden, ffn, heads, vocab" in unknown and "deepseek_v3" in unknown
    missing = error({"model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100})
    # the path is shown whole or shortened by its length (a pytest-xdist worker's folder is longer): not its end
    assert missing.startswith("model.qk_rope_head_dim") and "\" is missing" in missing and "n_routed_experts" in missing
    assert "is not valid JSON" in error("{not json")
    assert "must hold a JSON object" in error("[1, 2]")
    llama = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
             "intermediate_size": 128}
    assert error({**llama, "num_hidden_layers": "32"}).startswith('model.num_hidden_layers: "32" in ')
    assert "allowed: a whole number from 1 to" in error({**llama, "num_attention_heads": 0})
    assert error({**llama, "model_type": "qwen2", "use_sliding_window": True, "sliding_window": 8,
                  "max_window_layers": "all"}).startswith('model.max_window_layers: "all" in ')
    assert error({**llama, "model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2,
                  "moe_intermediate_size": 32, "mlp_only_layers": 5}).startswith("model.mlp_only_layers: 5 in ")
    assert error({**llama, "num_key_value_heads": 64}).startswith("model.kv_heads")  # more KV heads than heads
    with pytest.raises(InputError, match="not a file"):
        core.evaluate(model=str(tmp_path / "missing" / "config.json"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="folder without a config.json"):
        core.evaluate(model=str(tmp_path / "empty"))


def test_excel_functions_take_a_path():
    from gpu_tco.addin.functions import call
    path = _config("DeepSeek-V3")
    assert call("MODEL_SPEC", path, "kv_lora_rank") == 512
    assert call("MODEL_SPEC", path, "params_b") == pytest.approx(671, rel=0.01)
    assert call("GPU_MEMORY_TRAIN", path) == call("GPU_MEMORY_TRAIN", "DeepSeek-V3")


def test_command_line_and_scenario_files_read_a_config(tmp_path):
    """One subprocess: estimate --json with a folder path, then a TOML scenario naming a config.json beside it."""
    folder = tmp_path / "models" / "Qwen2.5-7B"
    folder.mkdir(parents=True)
    shutil.copy(CONFIGS / "Qwen2.5-7B" / "config.json", folder / "config.json")
    (tmp_path / "job.toml").write_text('model = "./models/Qwen2.5-7B/config.json"\nmethod = "qlora"\n')
    script = (
        "import sys, runpy\n"
        "from gpu_tco.cli import main\n"
        f"a = main(['estimate', '--model', {str(folder)!r}, '--json'])\n"
        "print('=====')\n"
        f"b = main(['estimate', '--scenario', {str(tmp_path / 'job.toml')!r}, '--json'])\n"
        "print('=====')\n"
        "c = main(['estimate', '--model', 'Qwen2.5-7B', '--method', 'qlora', '--json'])\n"
        "sys.exit(a or b or c)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second, third = (json.loads(x) for x in out.stdout.split("=====\n"))
    assert first["assumptions"]["model_source"].startswith("Hugging Face config.json of ") and str(folder) not in out.stdout
    assert first["quantities"]["params_total_b"] == pytest.approx(7.6156, rel=1e-4)
    reads_context = {"model_context_limit", "max_context_fit"}  # Qwen2.5 7B's config: 32,768; the catalog: 131,072 (YaRN)
    assert {k: v for k, v in second["quantities"].items() if k not in reads_context} == \
        {k: v for k, v in third["quantities"].items() if k not in reads_context}
    assert "architecture read from the Hugging Face config.json" in out.stderr


FIELD_POOL = sorted({"num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                     "vocab_size", "head_dim", "tie_word_embeddings", "max_position_embeddings", "sliding_window",
                     "use_sliding_window", "max_window_layers", "layer_types", "num_local_experts", "num_experts",
                     "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
                     "mlp_only_layers", "n_routed_experts", "n_shared_experts", "first_k_dense_replace", "moe_layer_freq",
                     "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "topk_method",
                     "interleave_moe_layer_step", "moe_layers", "intermediate_size_mlp", "attention_chunk_size", "no_rope_layers",
                     "sliding_window_pattern", "attention_bias"})


def test_any_config_gives_fields_or_one_line():
    """Configs of every supported type with fields missing, zero, huge, negative, of the wrong type or nested:
    either catalog fields core accepts, or an InputError; nothing else comes out."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from gpu_tco.core.architectures import custom_row
    values = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True), st.text(max_size=5),
                       st.lists(st.one_of(st.integers(0, 60), st.text(max_size=20)), max_size=6), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))

    @settings(max_examples=120, deadline=None)
    @given(st.sampled_from(sorted(hf_config.FAMILIES)), st.dictionaries(st.sampled_from(FIELD_POOL), values, max_size=12),
           st.booleans())
    def check(mtype, fields, nested):
        base = {"num_hidden_layers": 4, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 100}
        cfg = {"model_type": mtype, **base, **fields}
        if nested:
            cfg = {"model_type": mtype.removesuffix("_text"), "text_config": cfg, "vision_config": fields}
        try:
            custom_row(hf_config.architecture(cfg))
        except InputError as err:
            assert "\n" not in str(err)
    check()
