"""Models from a Hugging Face ``config.json``: the architecture fields of the model catalog read from
the file a model is published with.

A model input can be a path (a ``config.json``, or a folder holding one) or a Hub id ("org/name")
that is not a catalog name: the id is read from the local Hugging Face cache
(``HF_HUB_CACHE``, else ``HF_HOME``/hub, else ~/.cache/huggingface/hub), and fetched with
``huggingface_hub`` only when that package is installed and the cache does not hold it.

Each supported ``model_type`` maps its fields to the catalog's fields so that the parameter count of
``core/formulas.py`` (``params_total``) equals the model's tensors:

* llama, mistral, mixtral, qwen2, qwen3, qwen2_moe, qwen3_moe: Q/K/V/O projections (Qwen2 with Q/K/V
  biases; Qwen3 with a per-head RMSNorm of Q and K, 2 x head_dim weights per layer, in ``other_params``);
  Qwen2-MoE's shared expert as ``shared_expert_intermediate_size / moe_intermediate_size`` experts of the
  routed width, plus its one-output gate (hidden weights per layer) in ``other_params``.
  Source: Hugging Face transformers, models/<type>/modeling_<type>.py.
* gemma2, gemma3 (text_config): four norms per layer, tied embeddings; Gemma 3's Q/K norms in
  ``other_params``; the share of layers attending within ``sliding_window`` from ``layer_types``, else
  Gemma 2's alternation (every other layer) or Gemma 3's ``sliding_window_pattern`` (5 local of 6).  The
  vision tower of Gemma 3 is not counted, like the catalog's Gemma-3-27B (Google, "Gemma 3 Technical
  Report", 2025-03-12, Table 1: text parameters).
* deepseek_v2, deepseek_v3: multi-head latent attention (q_lora_rank, kv_lora_rank, qk_rope_head_dim,
  qk_nope_head_dim + qk_rope_head_dim = head_dim, v_head_dim), n_shared_experts shared experts of
  moe_intermediate_size, the first ``first_k_dense_replace`` layers (and those off ``moe_layer_freq``)
  dense with intermediate_size; V3's per-expert score-correction bias (topk_method noaux_tc) in
  ``other_params``; the multi-token-prediction module is not counted (DeepSeek-AI, "DeepSeek-V3
  Technical Report", arXiv:2412.19437, 2024-12-27: 671B main model).
* gpt_oss: biased attention, per-expert biases (2 x intermediate + hidden), router biases, one attention
  sink per head and the output projection's bias in ``other_params`` (OpenAI, "gpt-oss-120b &
  gpt-oss-20b Model Card", 2025-08-05).
* llama4 (text_config): one shared expert; ``interleave_moe_layer_step`` (or ``moe_layers``) sets the
  dense layers (width intermediate_size_mlp); 3 of 4 layers attend within ``attention_chunk_size``
  (``no_rope_layers``); the vision encoder and projector of ``vision_config`` count in
  ``encoder_params`` (Meta, "The Llama 4 herd", 2025-04-05).
* The families of 2025-2026 (Qwen3.5 and Qwen3-Next, Qwen3-VL, DeepSeek-V3.2 and V4, GLM-5, Kimi K2/K2.5 and Kimi
  Linear, MiniMax-M2/M3, Gemma 4, Nemotron-H and Nemotron 3, nemotron-nas, MiMo, Step 3.7): ``hf_families``, each
  with its source; vision-language wrappers (``hf_families.WRAPPERS``) are read through their ``text_config``.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from . import hf_families, json_numbers
from .errors import InputError, _Shown

MAX_CONFIG_BYTES = 4 * 2**20  # a config.json is a few kB; a file that never ends is cut off here
MAX_LAYERS = 100_000
COMMON_FIELDS = ("num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "vocab_size")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")

# model_type -> the family label shown with the model
FAMILIES = {
    "llama": "Llama", "mistral": "Mistral", "mixtral": "Mixtral", "qwen2": "Qwen2", "qwen3": "Qwen3",
    "qwen2_moe": "Qwen2 MoE", "qwen3_moe": "Qwen3 MoE", "gemma2": "Gemma 2", "gemma3": "Gemma 3", "gemma3_text": "Gemma 3",
    "deepseek_v2": "DeepSeek-V2", "deepseek_v3": "DeepSeek-V3", "gpt_oss": "gpt-oss", "llama4": "Llama 4",
    "llama4_text": "Llama 4", **hf_families.NEW_FAMILIES,
}
# transformers' defaults for fields a published config.json may leave out (configuration_<type>.py)
_TYPE_DEFAULTS = {
    "gemma2": {"tie_word_embeddings": True, "vocab_size": 256000, "max_position_embeddings": 8192, "sliding_window": 4096},
    "gemma3_text": {"tie_word_embeddings": True, "vocab_size": 262208, "max_position_embeddings": 131072,
                    "sliding_window": 4096, "sliding_window_pattern": 6, "head_dim": 256},
    "llama4_text": {"vocab_size": 202048, "max_position_embeddings": 4096 * 32, "attention_chunk_size": 8192,
                    "interleave_moe_layer_step": 1, "num_local_experts": 16, "num_experts_per_tok": 1,
                    "intermediate_size_mlp": 16384},
    "deepseek_v3": {"moe_layer_freq": 1, "first_k_dense_replace": 3, "n_shared_experts": 1, "topk_method": "noaux_tc"},
    "deepseek_v2": {"moe_layer_freq": 1, "first_k_dense_replace": 0, "topk_method": "greedy"},
    "qwen2_moe": {"decoder_sparse_step": 1, "mlp_only_layers": []},
    "qwen3_moe": {"decoder_sparse_step": 1, "mlp_only_layers": []},
}
_NEEDED = {  # the fields each type needs beyond COMMON_FIELDS (named in the error when one is missing)
    "mixtral": ("num_local_experts", "num_experts_per_tok"),
    "qwen2_moe": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "qwen3_moe": ("num_experts", "num_experts_per_tok", "moe_intermediate_size"),
    "deepseek_v2": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim",
                    "qk_nope_head_dim", "v_head_dim"),
    "deepseek_v3": ("n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim",
                    "qk_nope_head_dim", "v_head_dim"),
    "gpt_oss": ("num_local_experts", "num_experts_per_tok"),
    **hf_families.NEEDED,
}


def looks_like_path(text: str) -> bool:
    """True for text meant as a file or folder: ends in .json, starts with ./ ../ / ~ or a drive letter."""
    t = text.strip()
    return (t.lower().endswith(".json") or t.startswith(("./", "../", "/", "~", ".\\", "..\\", "\\"))
            or bool(re.match(r"^[A-Za-z]:[\\/]", t)))


def is_hub_id(text: str) -> bool:
    """True for "org/name" as the Hugging Face Hub spells a model id."""
    return bool(_HUB_ID.match(text.strip()))


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub
    (the order huggingface_hub itself uses)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def cached_config(repo_id: str) -> Path | None:
    """The config.json of ``repo_id`` in the local Hugging Face cache (the snapshot refs/main names,
    else the newest snapshot holding one), or None."""
    folder = hub_cache_dir() / ("models--" + repo_id.strip().replace("/", "--"))
    snapshots = folder / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = folder / "refs" / "main"
    if ref.is_file():
        main = snapshots / ref.read_text(encoding="utf-8").strip() / "config.json"
        if main.is_file():
            return main
    found = [p for p in snapshots.glob("*/config.json") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def fetch_config(repo_id: str) -> Path | None:
    """``repo_id``'s config.json downloaded into the Hugging Face cache with huggingface_hub, or None when that
    package is not installed or the Hub cannot be reached (HF_HUB_OFFLINE=1 keeps it from trying)."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        return None
    try:
        return Path(hf_hub_download(repo_id.strip(), "config.json"))
    except Exception:  # no network, no such repository, a gated model: the caller reports the name as unknown
        return None


def config_path(text: str) -> Path:
    """The config.json a path names (the file, or config.json inside a folder); raises InputError."""
    p = Path(text.strip()).expanduser()
    if p.is_dir():
        p = p / "config.json"
        if not p.is_file():
            raise InputError("model", text, "is a folder without a config.json; give a config.json or a folder holding one")
    if not p.is_file():
        raise InputError("model", text, "is not a file: give a Hugging Face config.json (or a folder holding one), "
                                        "a catalog model name or a parameter count")
    return p


def read_config(path: str | os.PathLike) -> dict:
    """The JSON object in a config.json; raises InputError (field model) when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as err:
        raise InputError("model", str(path), f"cannot be read ({err.strerror or err})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise InputError("model", str(path), "is larger than 4 MB; a config.json is a few kB")
    try:
        data = json_numbers.loads(raw, str(path), anywhere=False)  # fields read are checked (check_fields)
    except json_numbers.JsonNumberError as err:
        raise InputError(f"model.{err.field}", _Shown(err.value_text), f"in {path} {json_numbers.PROBLEM}") from None
    except UnicodeDecodeError as err:
        raise InputError("model", str(path), f"is not UTF-8 text (byte {err.start})") from None
    except (ValueError, RecursionError) as err:
        raise InputError("model", str(path), f"is not valid JSON ({str(err)[:120]})") from None
    if not isinstance(data, dict):
        raise InputError("model", str(path), "must hold a JSON object (a Hugging Face config.json)")
    return data


COUNT_MAX = 10**9  # no architecture field of a published model comes near (the largest: 10 million positions)
# The fields the readers below use, by what they must hold (transformers' configuration_<type>.py):
# "count" a whole number >= 1, "whole" >= 0, "flag" a JSON true/false (or 0/1), "indices" a list of layer
# numbers, "flags" a list of true/false or 0/1, "names" a list of texts.  A field left out or null takes
# the type's default; any other value is refused naming field, value and what is allowed.
FIELD_RULES = {
    **dict.fromkeys(("num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                     "vocab_size", "head_dim", "max_position_embeddings", "num_local_experts", "num_experts", "n_routed_experts",
                     "num_experts_per_tok", "experts_per_token", "moe_intermediate_size", "kv_lora_rank", "qk_rope_head_dim",
                     "qk_nope_head_dim", "v_head_dim", "intermediate_size_mlp", "decoder_sparse_step",
                     "interleave_moe_layer_step", "sliding_window_pattern", "patch_size", "image_size", "num_channels",
                     "projector_input_dim", "projector_output_dim", "vision_output_dim"), "count"),
    **dict.fromkeys(("sliding_window", "attention_chunk_size", "max_window_layers", "first_k_dense_replace", "n_shared_experts",
                     "q_lora_rank", "shared_expert_intermediate_size"), "whole"),
    **dict.fromkeys(("tie_word_embeddings", "attention_bias", "use_sliding_window"), "flag"),
    **dict.fromkeys(("moe_layers", "mlp_only_layers"), "indices"),
    "no_rope_layers": "flags", "layer_types": "names", "moe_layer_freq": "count_or_flags", "pixel_shuffle_ratio": "fraction",
}
RULE_WORDS = {"count": f"a whole number from 1 to {COUNT_MAX:,}", "whole": f"a whole number from 0 to {COUNT_MAX:,}",
              "flag": "true or false (JSON, without quotes)", "indices": "a list of layer numbers from 0 to the layers - 1",
              "flags": "a list of true/false or 0/1, one per layer", "names": "a list of texts, one per layer",
              "fraction": "a number above 0 and at most 1",
              "count_or_flags": f"a whole number from 1 to {COUNT_MAX:,} (every n-th layer), or a list of 0/1 per layer"}


def check_fields(cfg: dict, where: str = "config.json") -> None:
    """The fields of FIELD_RULES in a config (and its text_config and vision_config) by type and range; raises
    InputError naming the field ("model.text_config.num_key_value_heads"), the value, the file and what is allowed."""
    parts = [("", cfg)] + [(f"{k}.", cfg[k]) for k in ("text_config", "vision_config") if isinstance(cfg.get(k), dict)]
    for prefix, fields in parts:
        layers = fields.get("num_hidden_layers")
        for key, value in fields.items():
            rule = FIELD_RULES.get(key)
            if rule is None or value is None:
                continue
            if rule == "count_or_flags":
                rule = "flags" if isinstance(value, list) else "count"
            field = f"model.{prefix}{key}"
            if rule in ("count", "whole"):
                json_numbers.number(value, field, where, RULE_WORDS[rule], minimum=1 if rule == "count" else 0,
                                    maximum=COUNT_MAX, whole=True)
            elif rule == "fraction":
                json_numbers.number(value, field, where, RULE_WORDS[rule], minimum=1e-9, maximum=1)
            elif rule == "flag":
                if not (isinstance(value, bool) or (type(value) is int and value in (0, 1))):
                    raise InputError(field, json_numbers._Raw(value), f"in {where} is not allowed; allowed: {RULE_WORDS[rule]}")
            elif not isinstance(value, list):
                raise InputError(field, json_numbers._Raw(value), f"in {where} is not allowed; allowed: {RULE_WORDS[rule]}")
            else:
                top = int(layers) - 1 if isinstance(layers, int) and not isinstance(layers, bool) else COUNT_MAX
                for i, item in enumerate(value):
                    ok = (isinstance(item, str) if rule == "names" else
                          (isinstance(item, bool) or (type(item) is int and item in (0, 1))) if rule == "flags" else
                          type(item) is int and 0 <= item <= top)
                    if not ok:
                        raise InputError(f"{field}[{i}]", json_numbers._Raw(item),
                                         f"in {where} is not allowed; allowed: {RULE_WORDS[rule]}"
                                         + (f" ({top})" if rule == "indices" and top < COUNT_MAX else ""))


def _model_type(cfg: dict) -> str:
    t = str(cfg.get("model_type") or "").strip().lower()
    if not t:
        arch = " ".join(map(str, cfg.get("architectures") or [])).lower()
        for known in sorted(FAMILIES, key=len, reverse=True):
            if known.replace("_", "") in arch.replace("_", ""):
                return known
    return t


def architecture(cfg: dict, where: str = "config.json") -> dict:
    """The model catalog's fields (core/data/models.csv columns) for a Hugging Face config.

    Raises InputError naming the missing field, or, for an unknown ``model_type``, the fields a model
    given as a table of architecture fields needs.
    """
    check_fields(cfg, where)
    try:
        return _architecture(cfg, where)
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError, OverflowError) as err:
        if isinstance(err, InputError):
            raise
        raise InputError("model", where, f"has a field gpu-tco cannot read ({type(err).__name__}: {str(err)[:80]}); "
                                         "the published config.json of the model reads") from None


def _architecture(cfg: dict, where: str) -> dict:
    if "model_type" not in cfg and isinstance(cfg.get("quantization"), dict):
        algo = cfg["quantization"].get("quant_algo") or "a weight format"
        raise InputError("model", where, f"is a quantization recipe (hf_quant_config.json: {algo}), not a model's config; give "
                                         "the config.json beside it, and its weight format as weights_dtype")
    mtype = _model_type(cfg)
    top = cfg
    if mtype in ("gemma3", "llama4", *hf_families.WRAPPERS) or (isinstance(cfg.get("text_config"), dict) and mtype not in FAMILIES):
        text = cfg.get("text_config")
        if not isinstance(text, dict):
            raise InputError("model", where, f"is a {mtype} config without a text_config; the text model's fields are needed")
        cfg = text
        wrapped = {"gemma3": "gemma3_text", "llama4": "llama4_text", **hf_families.WRAPPERS}.get(mtype)
        mtype = {"gemma3": "gemma3_text", "llama4": "llama4_text"}.get(mtype) or _model_type(text) or wrapped
    if mtype not in FAMILIES:
        raise InputError("model", where, f"has model_type {mtype or 'none'!r}, which gpu-tco cannot read; supported: "
                                         f"{', '.join(sorted(set(FAMILIES) - {'gemma3_text', 'llama4_text'}))}; or give the "
                                         "model as a table of fields: layers, hidden, ffn, heads, vocab (and kv_heads, "
                                         "head_dim, experts, active_experts)")
    c = {**_TYPE_DEFAULTS.get(mtype, {}), **{k: v for k, v in cfg.items() if v is not None}}
    if isinstance(c.get("layers_block_type"), list) and "num_hidden_layers" not in c:
        c["num_hidden_layers"] = len(c["layers_block_type"])  # Nemotron 3 Ultra lists its blocks instead
    if top is not cfg and "tie_word_embeddings" not in cfg and "tie_word_embeddings" in top:
        c["tie_word_embeddings"] = top["tie_word_embeddings"]  # multimodal configs keep it beside text_config

    def need(key):
        if key not in c:
            raise InputError(f"model.{key}", where, f"is missing from this {mtype} config.json; a {mtype} model needs "
                                                    f"{', '.join(COMMON_FIELDS + _NEEDED.get(mtype, ()))}")
        v = c[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise InputError(f"model.{key}", v, f"in {where} must be a number > 0")
        return v

    L, h, heads, vocab = need("num_hidden_layers"), need("hidden_size"), need("num_attention_heads"), need("vocab_size")
    if L != int(L) or L > MAX_LAYERS:  # the deepest published models have about 130 layers; per-layer rules loop over them
        raise InputError("model.num_hidden_layers", L, f"in {where} must be a whole number from 1 to {MAX_LAYERS:,}")
    kv = c.get("num_key_value_heads") or heads
    head_dim = c.get("head_dim") or h / heads
    row = {"layers": L, "hidden": h, "heads": heads, "kv_heads": kv, "head_dim": head_dim, "vocab": vocab,
           "tied_embeddings": int(bool(c.get("tie_word_embeddings", False))), "gated_mlp": 1, "norms_per_layer": 2,
           "qkv_bias": int(bool(c.get("attention_bias", False)))}
    if c.get("max_position_embeddings"):  # absent: the architecture's default context, which a serving plan says it assumed
        row["max_context"] = c["max_position_embeddings"]
    window = c.get("sliding_window") or 0
    sliding = _sliding_fraction(c, L) if window else 0.0
    other, window, sliding = _family_fields(mtype, c, top, row, need, window, sliding)
    row["sliding_window"] = window if sliding else 0
    row["sliding_layer_fraction"] = sliding if window else 0.0
    if other:
        row["other_params"] = other
    return row




def _family_fields(mtype: str, c: dict, top: dict, row: dict, need, window, sliding) -> tuple[float, float, float]:
    """The fields one family's config.json spells its own way, into ``row``; returns (parameters outside the
    catalog's per-layer rules, the sliding window, the fraction of layers that slide)."""
    L, h, heads, head_dim = row["layers"], row["hidden"], row["heads"], row["head_dim"]
    other = 0
    if mtype in ("llama", "mistral", "mixtral", "qwen2", "qwen3"):
        row["ffn"] = need("intermediate_size")
        if mtype == "qwen2":
            row["qkv_bias"] = 1
        if mtype in ("qwen2", "qwen3"):
            # Qwen2/3 configs carry sliding_window even when use_sliding_window is false
            mwl = c.get("max_window_layers", L)
            sliding = max(0, L - mwl) / L if c.get("use_sliding_window") and window else 0.0
        if mtype == "qwen3":
            other += L * 2 * head_dim  # q_norm and k_norm: one RMSNorm of head_dim each
        if mtype == "mixtral":
            row["experts"], row["active_experts"] = need("num_local_experts"), need("num_experts_per_tok")
    elif mtype in ("qwen2_moe", "qwen3_moe"):
        f = need("moe_intermediate_size")
        row["ffn"], row["experts"], row["active_experts"] = f, need("num_experts"), need("num_experts_per_tok")
        step, only = c.get("decoder_sparse_step") or 1, set(c.get("mlp_only_layers") or [])
        moe = sum(1 for i in range(int(L)) if i not in only and (i + 1) % step == 0)
        if moe < L:
            row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
        if mtype == "qwen2_moe":
            row["qkv_bias"] = 1
            shared = c.get("shared_expert_intermediate_size") or 0
            if shared:
                row["shared_experts"] = shared / f
                other += moe * h  # shared_expert_gate: hidden -> 1
        else:
            other += L * 2 * head_dim
        sliding = max(0, L - c.get("max_window_layers", L)) / L if c.get("use_sliding_window") and window else 0.0
    elif mtype in ("gemma2", "gemma3_text"):
        row["ffn"], row["norms_per_layer"] = need("intermediate_size"), 4
        if mtype == "gemma3_text":
            other += L * 2 * head_dim
    elif mtype in ("deepseek_v2", "deepseek_v3"):
        rope, nope = need("qk_rope_head_dim"), need("qk_nope_head_dim")
        row.update(head_dim=rope + nope, qk_rope_dim=rope, v_head_dim=need("v_head_dim"), kv_lora_rank=need("kv_lora_rank"),
                   q_lora_rank=c.get("q_lora_rank") or 0, kv_heads=heads, ffn=need("moe_intermediate_size"),
                   experts=need("n_routed_experts"), active_experts=need("num_experts_per_tok"),
                   shared_experts=c.get("n_shared_experts") or 0)
        first, freq = c.get("first_k_dense_replace") or 0, c.get("moe_layer_freq") or 1
        moe = sum(1 for i in range(int(L)) if i >= first and i % freq == 0)
        if moe < L:
            row["dense_layers"], row["dense_ffn"] = L - moe, need("intermediate_size")
        if c.get("topk_method") == "noaux_tc":
            other += moe * row["experts"]  # e_score_correction_bias: one per routed expert
    elif mtype == "gpt_oss":
        f, E = need("intermediate_size"), need("num_local_experts")
        row.update(ffn=f, experts=E, active_experts=c.get("num_experts_per_tok") or need("experts_per_token"), qkv_bias=1)
        # per layer: expert biases (gate and up: 2 f, down: h), router bias, attention sinks, o_proj bias
        other += L * (E * (2 * f + h) + E + heads + h)
    elif mtype in hf_families.NEW_FAMILIES:
        return hf_families.read(mtype, c, top, row, need, window, sliding)
    elif mtype == "llama4_text":
        E = need("num_local_experts")
        row.update(ffn=need("intermediate_size"), experts=E, active_experts=need("num_experts_per_tok"), shared_experts=1)
        moe_layers = c.get("moe_layers")
        if moe_layers is None:
            step = c.get("interleave_moe_layer_step") or 1
            moe_layers = list(range(step - 1, int(L), step))
        if len(moe_layers) < L:
            row["dense_layers"], row["dense_ffn"] = L - len(moe_layers), need("intermediate_size_mlp")
        window = c.get("attention_chunk_size") or 0
        nope = c.get("no_rope_layers")
        rope_layers = sum(1 for x in nope if x) if nope else sum(1 for i in range(int(L)) if (i + 1) % 4 != 0)
        sliding = rope_layers / L if window else 0.0
        vision = top.get("vision_config")
        if isinstance(vision, dict):
            row["encoder_params"] = _llama4_vision_params(vision, h)
    return other, window, sliding


def _sliding_fraction(c: dict, L) -> float:
    """The share of layers attending within the sliding window: from ``layer_types`` when the config lists them,
    else each type's rule (Gemma 2: every other layer; Gemma 3: all but every ``sliding_window_pattern``-th;
    Mistral, Mixtral and others with a window: every layer)."""
    types = c.get("layer_types")
    if isinstance(types, list) and types:
        return sum(1 for t in types if "sliding" in str(t)) / len(types)
    mtype = c.get("model_type")
    if mtype == "gemma2":
        return sum(1 for i in range(int(L)) if i % 2 == 0) / L
    if mtype in ("gemma3_text", "gemma3"):
        p = c.get("sliding_window_pattern") or 6
        return sum(1 for i in range(int(L)) if (i + 1) % p != 0) / L
    return 1.0


def _llama4_vision_params(v: dict, text_hidden) -> int:
    """Parameters of Llama 4's vision encoder, pixel-shuffle adapter and projector to the text width
    (transformers, models/llama4/modeling_llama4.py: unfolded patch projection, class token, positions,
    two LayerNorms, ``num_hidden_layers`` encoder layers with biased attention and MLP, the adapter's two
    bias-free projections, and the bias-free projector)."""
    d, f, layers = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    patch, image, ch = v.get("patch_size", 14), v.get("image_size", 336), v.get("num_channels", 3)
    positions = (image // patch) ** 2 + 1
    per_layer = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 2 * 2 * d
    ratio = v.get("pixel_shuffle_ratio", 0.5)
    adapter_in = int(d / (ratio * ratio))
    adapter = adapter_in * v["projector_input_dim"] + v["projector_output_dim"] * v["projector_output_dim"]
    projector = v["vision_output_dim"] * text_hidden
    return int(ch * patch * patch * d + d + positions * d + 2 * 2 * d + layers * per_layer + adapter + projector)


def published_weights(cfg: dict) -> str | None:
    """The weight format a config's quantization_config says the checkpoint is published in, as a weights_dtype name
    ("fp8", "nvfp4", "mxfp4", "int4_awq", "int4_gptq", "nf4"), "mixed" for several, or None (none stated)."""
    q = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get("quantization_config")
    if not isinstance(q, dict):
        return None
    method, algo = str(q.get("quant_method") or "").lower(), str(q.get("quant_algo") or "").upper()
    if algo == "MIXED_PRECISION" or q.get("moe_quant_algo"):
        return "mixed"
    if algo in ("FP8", "NVFP4"):
        return algo.lower()
    if method in ("fp8", "mxfp4"):
        return method
    if method in ("awq", "gptq"):
        return "int8" if q.get("bits") == 8 else f"int4_{method}"
    if method == "bitsandbytes":
        return "nf4" if q.get("load_in_4bit") else "int8"
    if method == "compressed-tensors":
        if "mxfp4" in str(q.get("format") or ""):
            return "mxfp4"
        groups = [g.get("weights") or {} for g in (q.get("config_groups") or {}).values() if isinstance(g, dict)]
        kinds = {(w.get("num_bits"), w.get("type"), w.get("group_size")) for w in groups}
        if len(kinds) == 1:
            bits, kind, group = kinds.pop()
            return {(8, "float"): "fp8", (4, "float"): "nvfp4" if group == 16 else "mxfp4", (4, "int"): "int4_gptq",
                    (8, "int"): "int8"}.get((bits, kind))
        return "mixed" if kinds else None
    return None


@functools.lru_cache(maxsize=64)
def _row_from_file(path: str, mtime_ns: int, size: int, name: str, source: str) -> tuple:
    cfg = read_config(path)
    fields = architecture(cfg, where=path)
    arch = (cfg.get("architectures") or [cfg.get("model_type", "")])[0]
    mtype = _model_type(cfg)
    family = FAMILIES.get(mtype) or FAMILIES.get(hf_families.WRAPPERS.get(mtype, ""), mtype)  # a vision-language wrapper: its text model's
    published = published_weights(cfg)
    q = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get("quantization_config") or {}
    partly = any(q.get(k) for k in ("ignore", "exclude_modules", "modules_to_not_convert")) if isinstance(q, dict) else False
    weights = "" if published is None else (
        "; its weights are published in several formats (quantization_config)" if published == "mixed" else
        f"; its weights are published in {published}{', some layers in 16 bit' if partly else ''} (quantization_config; "
        f"weights_dtype {published} uses them)")
    spec = {**fields, "name": name, "family": family, "source": f"{source} ({arch}){weights}"}
    return tuple(spec.items())


def spec_from_path(path: Path, name: str, source: str) -> dict:
    """The architecture fields of a config.json with the model's name, family and source (a mapping
    ``architectures.custom_row`` checks like any model given as fields)."""
    st = path.stat()
    return dict(_row_from_file(str(path), st.st_mtime_ns, st.st_size, name, source))


def _name_for(path: Path) -> str:
    """A readable model name for a config path: the folder's name ("Qwen2.5-7B"), or the file's stem."""
    if path.name == "config.json" and path.parent.name not in ("", "."):
        parent = path.parent
        if parent.parent.name == "snapshots":  # a Hugging Face cache snapshot: models--org--name/snapshots/<hash>
            return parent.parent.parent.name.removeprefix("models--").replace("--", "/")
        return parent.name
    return path.stem


def resolve(text: str) -> dict | None:
    """The architecture fields (see ``spec_from_path``) for a model input that is a config path or a Hub id, else None.

    Paths (``looks_like_path``) always read the file; other text is tried as a local folder holding a
    config.json, then as a Hub id in the local cache, then fetched (huggingface_hub, when installed).
    """
    t = text.strip()
    try:
        return _resolve(t)
    except OSError as err:  # a name the file system cannot look up (too long, a bad character): not a file
        if looks_like_path(t):
            raise InputError("model", text, f"cannot be read as a config.json ({err.strerror or err})") from None
        return None


def _resolve(t: str) -> dict | None:
    # a file is named by the model's name and the file's base name, never its path: the source travels into workbooks
    # and e-mail drafts, and a path names the user's folders
    if looks_like_path(t):
        p = config_path(t)
        return spec_from_path(p, f"{_name_for(p)} (config.json)", _file_source(p))
    local = Path(t).expanduser()
    if local.is_file() and t.lower().endswith(".json"):
        return spec_from_path(local, f"{_name_for(local)} (config.json)", _file_source(local))
    if local.is_dir() and (local / "config.json").is_file():
        p = local / "config.json"
        return spec_from_path(p, f"{_name_for(p)} (config.json)", _file_source(p))
    if is_hub_id(t):
        p = cached_config(t)
        if p is not None:
            return spec_from_path(p, t, f"[hf:{t}] in the local Hugging Face cache")
        if not os.environ.get("HF_HUB_OFFLINE") and not os.environ.get("GPU_TCO_OFFLINE"):
            p = fetch_config(t)
            if p is not None:
                return spec_from_path(p, t, f"[hf:{t}] downloaded from the Hugging Face Hub")
    return None


def _file_source(path: Path) -> str:
    """"Hugging Face config.json of Qwen2.5-7B (config.json)": the model's name and the file's base name."""
    return f"Hugging Face config.json of {_name_for(path)} ({path.name})"


def describe(row: dict) -> str:
    """One sentence saying where a model read from a config came from."""
    return f"model {row['name']}: architecture read from the {row['source']}"
