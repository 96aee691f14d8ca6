"""Matching names as people type them: normalisation and close-match suggestions.

Pure string functions (no catalog, no NumPy), shared by the catalogs, the engine and the
error messages.
"""
from __future__ import annotations

import difflib
import functools
import re

_NOISE_WORDS = re.compile(r"\b(nvidia|geforce|amd|instinct|tesla)\b")
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def normalize(name) -> str:
    """Lower-case, drop vendor words and everything but letters and digits ("NVIDIA H100 SXM" -> "h100sxm")."""
    return _normalized_text(str(name))


@functools.lru_cache(maxsize=4096)  # a close-match search normalises every candidate: the same few hundred names
def _normalized_text(name: str) -> str:
    s = _NOISE_WORDS.sub("", name.lower())
    return re.sub(r"[^a-z0-9.]", "", s).replace(".", "")


_NOT_KEPT = re.compile(r"[^a-z0-9.\n]")


def normalized(names: list) -> list[str]:
    """``normalize`` of each name, the substitutions run once over all of them (a refreshed catalog's 100,000 names)."""
    texts = [str(n) for n in names]
    joined = "\n".join(texts)
    if any("\n" in t for t in texts) or joined.lower().count("\n") != joined.count("\n"):
        return [normalize(n) for n in texts]  # a name holding a line break: one at a time
    return _NOT_KEPT.sub("", _NOISE_WORDS.sub("", joined.lower())).replace(".", "").split("\n") if texts else []


def words(name) -> list[str]:
    """The words of a name, split at spaces and punctuation: "H100 80GB" -> ["h100", "80gb"]."""
    return list(_words(str(name)))


@functools.lru_cache(maxsize=4096)
def _words(name: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(_NOISE_WORDS.sub(" ", name.lower())))


# Kept per pair of words: the candidates of one search share most of their words ("gib", "per", "gpu" in hundreds of
# quantity names), so a search compares each typed word with each distinct word once.
@functools.lru_cache(maxsize=1 << 16)
def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def similarity(typed: str, candidate: str) -> float:
    """How alike two names are, 0..1.  Each typed word is matched to the candidate's most alike
    word; the first word with a digit is the model number ("h100"), and a candidate without it
    (or a near miss such as "h1000") scores a third, so "H100 80GB" suggests H100 variants before A100-80GB.  The spelling of the
    whole name counts a quarter."""
    words_part = _words_part(_words(str(typed)), _words(str(candidate)))
    return 0.0 if words_part is None else words_part + 0.25 * _ratio(normalize(typed), normalize(candidate))


def _words_part(a: tuple[str, ...], b: tuple[str, ...]) -> float | None:
    """``similarity`` but the whole name's spelling: 0.75 x the words' score (None: no words to compare)."""
    if not a or not b:
        return None
    best = [max(_ratio(w, c) for c in b) for w in a]
    word_score = sum(r for r in best if r >= 0.6) / len(a)
    model_number = next((w for w in a if any(ch.isdigit() for ch in w)), None)
    if model_number is not None and max(_ratio(model_number, c) for c in b) < 0.85:
        word_score *= 0.3
    return 0.75 * word_score


def suggest(typed, candidates, n: int = 3, cutoff: float = 0.4) -> list[str]:
    """Up to ``n`` close matches for a mistyped name, most alike first (``similarity``, ties in the candidates'
    order).  The whole name's spelling, a quarter of the score and the slow part, is compared only for candidates
    whose words leave them a chance: most alike words first, until no candidate left can reach the ``n``-th score."""
    if n <= 0:
        return []
    typed = str(typed)[:200]  # a pasted novel is no name; compare its start only
    typed_words, typed_text = _words(typed), normalize(typed)
    # (the most a candidate can score, its words' part or None where either has no words: it scores 0, index, name)
    bounds = []
    for i, c in enumerate(dict.fromkeys(map(str, candidates))):
        part = _words_part(typed_words, _words(c))
        bounds.append((0.0 if part is None else part + 0.25, part, i, c))
    bounds.sort(key=lambda t: (-t[0], t[2]))
    scored: list[tuple[float, int, str]] = []
    for bound, part, i, c in bounds:
        if len(scored) >= n and bound < scored[n - 1][0] or bound < cutoff:
            break  # (sorted by the most each can score: no later candidate can reach the n-th score)
        scored.append((0.0 if part is None else part + 0.25 * _ratio(typed_text, normalize(c)), i, c))
        scored.sort(key=lambda t: (-t[0], t[1]))
    return [c for score, _, c in scored[:n] if score >= cutoff]


# Checkpoint-name suffixes that name a weight format (the weights_dtype catalog's names), as published on the Hugging Face
# Hub: "Qwen/Qwen3-235B-A22B-FP8", "nvidia/DeepSeek-V3.1-NVFP4", "Qwen/Qwen2.5-72B-Instruct-AWQ",
# "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "RedHatAI/Llama-3.1-8B-Instruct-W4A16", "unsloth/...-bnb-4bit".  Longest first.
WEIGHT_FORMAT_SUFFIXES = (
    ("fp8-static-pertensor", "fp8"), ("fp8-dynamic", "fp8"), ("fp8-static", "fp8"), ("fp8-block", "fp8"), ("fp8", "fp8"),
    ("w8a8-fp8", "fp8"), ("nvfp4", "nvfp4"), ("mxfp4", "mxfp4"), ("awq-int4", "int4_awq"), ("awq", "int4_awq"),
    ("gptq-int4", "int4_gptq"), ("gptq-int8", "int8"), ("gptq", "int4_gptq"), ("w4a16", "int4_gptq"), ("int4", "int4_gptq"),
    ("w8a8", "int8"), ("w8a16", "int8"), ("int8", "int8"), ("bnb-4bit", "nf4"),
    ("q4_k_m", "q4_k_m"), ("q8_0", "q8_0"), ("bf16", "bf16"), ("fp16", "fp16"),
)  # not "-GGUF" (a repository of many formats) nor a bare "-4bit" (MLX's and bitsandbytes' differ): no guess
_FORMAT_SUFFIX = re.compile(r"[-_ .](" + "|".join(re.escape(s) for s, _ in WEIGHT_FORMAT_SUFFIXES) + r")$", re.I)
_FORMAT_OF = dict(WEIGHT_FORMAT_SUFFIXES)


def split_weight_format(name) -> tuple[str, str | None, str]:
    """("nvidia/DeepSeek-V3.1", "nvfp4", "NVFP4") for "nvidia/DeepSeek-V3.1-NVFP4": the name without a trailing
    weight-format suffix, the weights_dtype it names (None when there is none) and the suffix as typed."""
    text = str(name).strip()
    m = _FORMAT_SUFFIX.search(text)
    if not m or m.start() == 0:
        return text, None, ""
    return text[:m.start()], _FORMAT_OF[m.group(1).lower()], m.group(1)
