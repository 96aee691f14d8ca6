"""The API price catalog (data/apis.csv): loading, refusing bad rows, the api_model input, `gpu-tco apis`
and its update from the genai-prices data.

tests/data/genai_prices_data.json holds the genai-prices data (Pydantic, https://github.com/pydantic/genai-prices,
MIT; package 0.2.3, read 2026-11-23) of the providers and models the catalog lists, in the shape of its data.json.
"""
from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tco import core
from gpu_tco.core import apis, catalog

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "genai_prices_data.json"


def _model(data, provider, model):
    return next(m for p in data if p["id"] == provider for m in p["models"] if m["id"] == model)


def test_catalog_loads_dated_sourced_rows_of_the_providers_people_compare_with():
    tab = catalog.apis()
    assert len(tab.rows) >= 30
    for r in tab.rows:
        assert r["usd_per_mtok_output"] > 0 and r["usd_per_mtok_input"] >= 0, r["name"]
        assert r["source"].startswith("https://") and "[genai_prices]" in r["source"], r["name"]
        assert catalog.as_of_problem(r["as_of"]) is None and len(r["as_of"]) == 10, r["name"]
    providers = {r["provider"] for r in tab.rows}
    assert {"OpenAI", "Anthropic", "Google", "DeepSeek", "Mistral AI", "Together AI", "Groq", "Fireworks AI"} <= providers
    # an open model served by an API names the catalog model, so a self-hosted setup of the same model compares with it
    assert tab.row("groq/llama-3.3-70b-versatile")["catalog_model"] == "Llama-3.3-70B"
    assert all(catalog.models().find(r["catalog_model"]) is not None for r in tab.rows if r["catalog_model"])


def test_catalog_prices_are_the_genai_prices_data_of_the_fixture():
    """Every built-in row's prices are what the genai-prices data gives on its date (the catalog is that snapshot)."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    index = apis.index_providers(data)
    for r in catalog.apis().rows:
        price = apis.price_on(index[r["price_key"]], datetime.date.fromisoformat(r["as_of"]))
        assert price == (r["usd_per_mtok_input"], r["usd_per_mtok_output"]), r["name"]


def test_prices_in_force_on_a_date_tiers_and_time_of_day():
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    o3 = _model(data, "openai", "o3")["prices"]  # OpenAI cut o3's price on 2025-06-10
    assert apis.price_on(o3, datetime.date(2025, 6, 9)) == (10.0, 40.0)
    assert apis.price_on(o3, datetime.date(2025, 6, 10)) == (2.0, 8.0)
    # tiered by prompt length: the base tier (prompts under 272,000 tokens)
    assert apis.price_on(_model(data, "openai", "gpt-5.5")["prices"], datetime.date(2026, 11, 23)) == (5.0, 30.0)
    # DeepSeek's prices by time of day: the standard price, not the off-peak discount
    assert apis.price_on(_model(data, "deepseek", "deepseek-chat")["prices"], datetime.date(2026, 11, 23)) == (0.27, 1.1)


def test_api_model_input_resolves_names_and_refuses_unknown_ones_with_close_matches():
    assert core.DEFAULTS["api_model"] == "together/Llama-3.3-70B-Instruct-Turbo"
    assert core.engine.check_input("api_model", "gpt-4o") == "openai/gpt-4o"
    assert core.engine.check_input("api_model", "Groq llama 3.3 70b versatile") == "groq/llama-3.3-70b-versatile"
    with pytest.raises(core.InputError) as err:
        core.engine.check_input("api_model", "claude-sonet-4-5")
    text = str(err.value)
    assert "\n" not in text and text.startswith('api_model: unknown "claude-sonet-4-5" (did you mean anthropic/claude-sonnet-4-5')


@pytest.mark.parametrize("csv_text, message", [
    ("name,usd_per_mtok_input,usd_per_mtok_output\nmy-api,0.5,-1\n",
     r"apis.csv, row 2, column usd_per_mtok_output: .*must be a finite number >= 0"),
    ("name,usd_per_mtok_input,usd_per_mtok_output\nmy-api,0.5,\n",
     r"apis.csv, row 2, column usd_per_mtok_output: is empty; a number is required"),
    ("name,usd_per_mtok_input,usd_per_mtok_output,as_of\nmy-api,0.5,1,2026-13-01\n",
     r"apis.csv, row 2, column as_of: .*is not a date"),
    ("name,usd_per_mtok_input,usd_per_mtok_output,catalog_model\nmy-api,0.5,1,Llama-3.3-71B\n",
     r"apis.csv, row 2, column catalog_model: unknown model 'Llama-3.3-71B' \(did you mean Llama-3.3-70B"),
    ("name,usd_per_mtok_input,usd_per_mtok_ouptut\nmy-api,0.5,1\n",
     r"apis.csv, row 1, column usd_per_mtok_ouptut: unknown column \(did you mean usd_per_mtok_output[,?]"),
])
def test_bad_user_rows_are_refused_in_one_line_naming_file_row_and_column(tmp_path, monkeypatch, csv_text, message):
    (tmp_path / "apis.csv").write_text(csv_text, encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        with pytest.raises(core.CatalogError, match=message) as err:
            catalog.reload()
        assert "\n" not in str(err.value)
    finally:
        monkeypatch.undo()
        catalog.reload()


def test_a_user_row_adds_an_api_and_a_row_of_the_same_name_overrides_the_price(tmp_path, monkeypatch):
    (tmp_path / "apis.csv").write_text("name,provider,usd_per_mtok_input,usd_per_mtok_output,source,as_of\n"
                                       "my-gateway/llama-70b,My gateway,0.2,0.6,contract,2026-10\n"
                                       "openai/gpt-4o,OpenAI,2,8,negotiated price,2026-11\n", encoding="utf-8")
    monkeypatch.setenv("GPU_TCO_CONFIG_DIR", str(tmp_path))
    try:
        tab = catalog.reload()["apis"]
        assert tab.row("my-gateway/llama-70b")["usd_per_mtok_output"] == 0.6
        assert tab.row("gpt-4o")["usd_per_mtok_output"] == 8  # the alias still finds the overridden row
        assert tab.row("gpt-4o")["price_key"] == "openai:gpt-4o"  # what the user row leaves out comes from the built-in
    finally:
        monkeypatch.undo()
        catalog.reload()


def _cli(*args, config: Path):
    env = {**os.environ, "GPU_TCO_CONFIG_DIR": str(config)}
    return subprocess.run([sys.executable, "-c", "import sys\nfrom gpu_tco.cli import main\n"
                           "for argv in (a.split('\\x1f') for a in sys.argv[1:]):\n"
                           "    print('\\x1e' + str(main(argv)), flush=True)\n", *("\x1f".join(a) for a in args)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


@pytest.mark.slow  # over 0.45 s
def test_apis_json_and_the_update_from_genai_prices_data_in_one_run(tmp_path):
    """`gpu-tco apis --json`, `--update FILE` (a changed price, a model the data no longer lists) and the listing
    afterwards, run for real; the update writes the user's apis.csv, which the catalog then reads."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    newer = copy.deepcopy(data)
    _model(newer, "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo")["prices"] = {"input_mtok": 0.6, "output_mtok": 0.75}
    for p in newer:
        p["models"] = [m for m in p["models"] if m["id"] != "gpt-4.1-nano"]
    newer_file = tmp_path / "data.json"
    newer_file.write_text(json.dumps(newer), encoding="utf-8")
    config = tmp_path / "config"
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    elsewhere = tmp_path / "out" / "apis.csv"
    ran = _cli(("apis", "--json"), ("apis", "--update", str(newer_file), "--as-of", "2026-12-01", "--json"),
               ("apis", "--json"), ("apis", "--update", str(bad)), ("apis",),
               ("apis", "--update", str(newer_file), "--as-of", "2026-13-01"),
               ("apis", "--update", str(newer_file), "--as-of", "2026-12-02", "--out", str(elsewhere)), config=config)
    assert ran.returncode == 0, ran.stderr
    outputs = ran.stdout.split("\x1e")
    codes = [int(o.split("\n", 1)[0]) for o in outputs[1:]]
    assert codes == [0, 0, 0, 2, 0, 2, 0], ran.stderr
    assert "gpu-tco: error: apis: --as-of '2026-13-01' is not a date; allowed: a day, YYYY-MM-DD (e.g. 2026-12-01)" in ran.stderr
    before = {r["name"]: r for r in json.loads(outputs[0])}
    assert before["together/Llama-3.3-70B-Instruct-Turbo"]["usd_per_mtok_output"] == 0.88
    summary = json.loads(outputs[1].split("\n", 1)[1])
    assert summary["file"] == str(config / "apis.csv") and summary["as_of"] == "2026-12-01"
    assert summary["changed"] == ["together/Llama-3.3-70B-Instruct-Turbo"]
    assert summary["missing"] == ["openai/gpt-4.1-nano"]
    assert len(summary["updated"]) == len(before) - 1
    after = {r["name"]: r for r in json.loads(outputs[2].split("\n", 1)[1])}
    llama = after["together/Llama-3.3-70B-Instruct-Turbo"]
    assert (llama["usd_per_mtok_input"], llama["usd_per_mtok_output"], llama["as_of"]) == (0.6, 0.75, "2026-12-01")
    assert after["openai/gpt-4.1-nano"]["as_of"] == before["openai/gpt-4.1-nano"]["as_of"]  # kept as it was
    assert "genai-prices data data.json" in llama["source"] and llama["source"].startswith("https://www.together.ai/pricing")
    errors = [line for line in ran.stderr.splitlines() if line.startswith("gpu-tco: error") and "--as-of" not in line]
    assert errors == ["gpu-tco: error: the file is not genai-prices data: it must hold a list of providers "
                      f"(genai-prices' data.json, {apis.DATA_JSON_URL})"]
    assert "together/Llama-3.3-70B-Instruct-Turbo" in outputs[4] and "Your row" in outputs[4]
    # --out writes the updated catalog elsewhere: every row the data lists carries the new date
    assert elsewhere.read_text(encoding="utf-8").count(",2026-12-02\n") == len(before) - 1
