"""Model architectures that are not catalog rows: a user's own fields, or an estimate from a
parameter count.

They live in bounded caches here, never in the models catalog: evaluating 500 different
parameter counts does not grow the catalog (nor a workbook written afterwards).
"""
from __future__ import annotations

import functools
import math
import re
from typing import Mapping

import numpy as np

from . import catalog
from .errors import InputError
from .text import did_you_mean

REQUIRED_FIELDS = ("layers", "hidden", "ffn", "heads", "vocab")
TEXT_FIELDS = ("name", "aliases", "family", "source", "as_of", "release_weights_dtype")
_NEW_COLUMNS = ("attention_layers", "state_layers", "state_layer_params", "state_elements_per_layer",
                "state_conv_elements_per_layer", "state_bits", "sparse_attention_tokens", "indexer_heads", "indexer_head_dim",
                "global_kv_heads", "global_head_dim", "attention_layer_params", "moe_latent_dim", "compressed_kv_layers",
                "indexer_kv_layers")  # layers that differ: hybrids, sparse and compressed attention, latent experts (0: none)
_DEFAULTS = {"tied_embeddings": 0, "gated_mlp": 1, "experts": 1, "active_experts": 1, "qkv_bias": 0,
             "norms_per_layer": 2, "dropout": 0, "other_params": 0, "max_context": 4096,
             "sliding_window": 0, "sliding_layer_fraction": 0, "params_published_b": 0, "is_estimate": 0,
             "shared_experts": 0, "dense_layers": 0, "dense_ffn": 0, "q_lora_rank": 0, "kv_lora_rank": 0, "qk_rope_dim": 0,
             "encoder_params": 0, "v_head_dim": 0, **{k: 0 for k in _NEW_COLUMNS}}
CONTEXT_IS_DEFAULT = "max_context_is_default"  # 1 on an architecture row whose max_context is a default, not the model's
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[bB]?\s*$")  # "70B", "1.5b", "13": a parameter count in billions
CACHE_SIZE = 256


def size_in_billions(text: str) -> float | None:
    """70.0 for "70B", "70b" or "70"; None when the text is not a bare size."""
    m = _SIZE.match(text)
    return float(m.group(1)) if m else None


def custom_row(spec: Mapping) -> dict:
    """A user-given architecture (a mapping of model catalog fields), checked like an input."""
    numeric = catalog.models().numeric
    allowed = set(numeric) | set(TEXT_FIELDS) | {CONTEXT_IS_DEFAULT}
    for key in spec:
        if key not in allowed:
            raise InputError(f"model.{key}", spec[key], f"is not an architecture field{did_you_mean(key, sorted(allowed))}")
    for key in REQUIRED_FIELDS:
        if key not in spec:
            raise InputError(f"model.{key}", None, f"is missing; a custom architecture needs {', '.join(REQUIRED_FIELDS)}")
    row: dict = {}
    for key in numeric:
        if key in spec:
            v = spec[key]
            if isinstance(v, (bool, str)) or not isinstance(v, (int, float, np.number)) or not math.isfinite(float(v)) or float(v) < 0:
                raise InputError(f"model.{key}", v, "must be a finite number >= 0")
            row[key] = float(v)
    for key in REQUIRED_FIELDS:
        if row[key] < 1 or row[key] != int(row[key]):
            raise InputError(f"model.{key}", spec[key], "must be a whole number >= 1")
    row.setdefault("kv_heads", row["heads"])
    row.setdefault("head_dim", row["hidden"] / row["heads"])
    for key, v in _DEFAULTS.items():
        row.setdefault(key, float(v))
    for key, rule in catalog.RULES["models"].items():  # the same ranges as a catalog row
        if key in row and not catalog.RULE_OK[rule](row[key]):
            raise InputError(f"model.{key}", row[key], f"is not allowed; allowed: {catalog.RULE_TEXT[rule]}")
    if row["active_experts"] > row["experts"]:
        raise InputError("model.active_experts", row["active_experts"], f"must be <= experts ({row['experts']:g})")
    if row["kv_heads"] > row["heads"] or row["kv_heads"] < 1:
        raise InputError("model.kv_heads", row["kv_heads"], f"must be between 1 and heads ({row['heads']:g})")
    for key in TEXT_FIELDS:
        if key in spec and (not isinstance(spec[key], str) or catalog.CONTROL_CHARACTERS.search(spec[key])):
            raise InputError(f"model.{key}", spec[key], "must be plain text (no control characters)")
    fields = ",".join(f"{k}={row[k]:g}" for k in sorted(row))
    row["name"] = str(spec.get("name") or f"custom[{fields}]")
    row["source"] = str(spec.get("source") or "user-given architecture")
    row["family"] = str(spec.get("family") or "custom")
    row.setdefault("aliases", "")
    row.setdefault("as_of", "")
    # a context length nobody gave (no max_context field, no max_position_embeddings in a config.json) is a default:
    # a serving job longer than it is planned with a note instead of refused
    row[CONTEXT_IS_DEFAULT] = 1.0 if "max_context" not in spec or spec.get(CONTEXT_IS_DEFAULT) else 0.0
    return row


@functools.lru_cache(maxsize=CACHE_SIZE)
def _estimate(params_b: float) -> tuple:
    return tuple(_estimate_row(params_b).items())


def estimate_architecture(params_b: float) -> dict:
    """A Llama-3-style architecture with about ``params_b`` billion parameters.

    Shape rules (from the Llama 3 family, Meta's config.json files): head_dim 128, 8 KV
    heads, gated MLP with f = 3.5 h, vocabulary 128,256 (tied below 4B), depth about
    h / 128.  h is chosen so that the count matches, a multiple of 128, and from 1,024 on a
    multiple of 1,024: the attention heads (h / 128) then a multiple of the 8 KV heads, as
    grouped-query attention needs, and split evenly by 2, 4 or 8 tensor-parallel GPUs, as in
    every Llama 3 model (4,096 / 8,192 / 16,384 wide: 32, 64, 128 heads); L is re-fitted to
    that h.  Results built on it carry ``model_is_estimate = 1``.

    ``params_b`` is a number from 0.001 to 100,000 (billions); anything else raises ``InputError``
    naming params_b and that range.
    """
    return dict(_estimate(check_params_b(params_b, "params_b")))


def _estimate_row(params_b: float) -> dict:
    target = params_b * 1e9
    vocab = 128_256
    tied = 1 if params_b < 4 else 0

    def count(h, layers):
        heads = max(1, h // 128)
        kv = min(8, heads)
        f = 3.5 * h
        per_layer = h * 128 * (heads + 2 * kv) + heads * 128 * h + 3 * h * f + 2 * h
        return layers * per_layer + vocab * h * (2 - tied) + h

    best = None
    for h in range(256, 65_536 + 1, 128):
        if h >= 1024 and h % 1024:  # heads a multiple of the 8 KV heads (grouped-query attention), split by 2, 4 or 8 GPUs
            continue
        heads = h // 128
        per_layer = count(h, 1) - count(h, 0)
        layers = max(1, round((target - count(h, 0)) / per_layer))
        aspect_err = abs(math.log(max(h / 128, 1) / layers))
        err = abs(count(h, layers) - target) / target + 0.05 * aspect_err
        if best is None or err < best[0]:
            best = (err, h, layers, heads)
    _, h, layers, heads = best
    return {
        "name": f"{params_b:g}B (estimated)", "aliases": "", "family": "estimated", "layers": float(layers),
        "hidden": float(h), "ffn": 3.5 * h, "heads": float(heads), "kv_heads": float(min(8, heads)), "head_dim": 128.0,
        "vocab": float(vocab), "tied_embeddings": float(tied), "gated_mlp": 1.0, "experts": 1.0, "active_experts": 1.0,
        "qkv_bias": 0.0, "norms_per_layer": 2.0, "dropout": 0.0, "other_params": 0.0, "max_context": 8192.0,
        "sliding_window": 0.0, "sliding_layer_fraction": 0.0, "params_published_b": float(params_b), "is_estimate": 1.0,
        **{k: 0.0 for k in ("shared_experts", "dense_layers", "dense_ffn", "q_lora_rank", "kv_lora_rank", "qk_rope_dim", "v_head_dim",
                                 "encoder_params", *_NEW_COLUMNS)},
        "source": "estimated from the parameter count with Llama-3 shape rules", "as_of": "", CONTEXT_IS_DEFAULT: 1.0,
    }


MIN_PARAMS_B, MAX_PARAMS_B = 0.001, 100_000  # one million to 100 trillion parameters: the shape rules' useful range


def check_params_b(value, field: str = "model", row=None) -> float:
    """A parameter count in billions as a float, or InputError naming ``field`` and the allowed range."""
    allowed = f"is not a parameter count; allowed: a number of billions from {MIN_PARAMS_B:g} to {MAX_PARAMS_B:,}"
    if value is None:
        raise InputError(field, None, "is missing" + allowed[len("is not a parameter count"):], row)
    if isinstance(value, (str, bytes, bytearray, bool, np.bool_)):
        raise InputError(field, value, allowed, row)
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(field, value, allowed, row) from None
    if not math.isfinite(x) or not MIN_PARAMS_B <= x <= MAX_PARAMS_B:
        raise InputError(field, value, allowed, row)
    return x
