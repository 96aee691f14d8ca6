"""The command line, run for real in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def gpu_tco(*args):
    return subprocess.run([sys.executable, "-m", "gpu_tco", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.slow
def test_main_job_prints_the_comparison(tmp_path):
    out = gpu_tco("--workbook", str(tmp_path / "main.xlsx"))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert str(tmp_path / "main.xlsx") in text and (tmp_path / "main.xlsx").exists()  # the workbook written, its path said
    assert "Llama-3-70B" in text
    for setup in ("4x RTX-4090", "2x H100-SXM", "8x A100-80GB-SXM"):
        assert setup in text
    header = next(line for line in text.splitlines() if line.startswith("setup"))
    for col in ("fits", "peak GiB/GPU", "GPUs needed", "job hours", "rent USD", "own USD", "capital USD"):
        assert col in header
    # QLoRA on an 8x H100 node fits, a full fine-tune of 70B does not
    rows = [line for line in text.splitlines() if line.startswith("8x H100-SXM")]
    assert any(" qlora " in r and " yes " in r for r in rows)
    assert any(" full " in r and " NO " in r for r in rows)
    from gpu_tco.core.scenarios import worded_recommendations
    for method, rec in worded_recommendations().items():  # the planner's recommendation, in core's words
        line = next(x for x in text.splitlines() if x.startswith(f"Recommended for {method}:"))
        assert line == f"Recommended for {method}: {rec.text}"
        assert f"{rec.option['n_gpus']}x {rec.option['gpu']}" in line
    assert "--allow-interruptible 1" in text  # how spot offers are treated is said
    # a setup that does not fit gets the cheapest change that makes it fit
    assert "8x H100-SXM full does not fit; it fits with" in text


@pytest.mark.slow  # over 0.45 s
def test_main_job_json_matches_core():
    from gpu_tco import core

    out = gpu_tco("--json", "--workbook", "")
    data = json.loads(out.stdout)
    # a row without a rental price says null, never 0
    assert all(r["rent_usd_per_gpu_hour"] is None or r["rent_usd_per_gpu_hour"] > 0 for r in data["rows"])
    row = next(r for r in data["rows"] if r["gpu"] == "H100-SXM" and r["n_gpus"] == 8 and r["method"] == "lora")
    # the row is priced at the offer the recommendation rule picks for that setup
    ref = core.evaluate({**data["job"], "gpu": "H100-SXM", "n_gpus": 8, "method": "lora", "offer": row["offer"]})
    assert row["peak_gib_per_gpu"] == pytest.approx(ref["peak_train_gib_per_gpu"], rel=1e-12)
    assert row["train_hours"] == pytest.approx(ref["train_hours"], rel=1e-12)
    assert row["rent_usd"] == pytest.approx(ref["rent_total_usd"], rel=1e-12)
    own = core.evaluate({**data["job"], "gpu": "H100-SXM", "n_gpus": 8, "method": "lora", "buy": 1})
    assert row["own_usd"] == pytest.approx(own["own_job_usd"], rel=1e-12)
    # the recommendation per method is the planner's (the one ranking rule); a table row is marked
    # only when it is that option
    from gpu_tco.core.planner import same_option
    for method, pick in data["recommended"].items():
        assert same_option(pick, core.plan({**data["job"], "method": method})["recommended"])
        for r in data["rows"]:
            if r["method"] == method and r["recommended"]:
                assert same_option({**r, "acquire": r["recommended"]}, pick)


def test_estimate_json_has_breakdown_and_assumptions():
    out = gpu_tco("estimate", "--model", "llama 3 8b", "--gpu", "rtx 4090", "--n-gpus", "1", "--method", "qlora", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    comp = data["breakdown_train_gib_per_gpu"]
    assert set(comp) == {"weights", "gradients", "optimizer", "activations", "logits", "kv_cache", "overhead", "allocator_peak",
                         "total"}
    parts = sum(v for k, v in comp.items() if k not in ("total", "allocator_peak"))
    assert parts == pytest.approx(comp["total"], rel=1e-12)
    # the two views: tensors alone (what PyTorch reports) below what must fit on the device
    assert comp["weights"] + comp["gradients"] + comp["optimizer"] < comp["allocator_peak"] < comp["total"]
    assert data["assumptions"]["inputs"]["gpu"] == "RTX-4090"
    assert "Ada" in data["assumptions"]["gpu_source"]
    assert data["units"]["peak_train_gib_per_gpu"] == "GiB/GPU"


def test_estimate_inference_table():
    out = gpu_tco("estimate", "--mode", "infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--n-gpus", "2",
                  "--weights-dtype", "fp8", "--context-tokens", "32768", "--batch", "8")
    assert out.returncode == 0, out.stderr
    assert "kv_cache" in out.stdout and "largest batch that fits" in out.stdout


def test_model_as_parameter_count_is_flagged_estimate():
    out = gpu_tco("estimate", "--model", "13")
    assert out.returncode == 0 and "ESTIMATED architecture" in out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (("estimate", "--gpu", "H1000"), 'gpu: unknown "H1000" (did you mean H100-SXM'),
    (("estimate", "--seq-len", "-5"), "seq_len: -5 is too small"),
    (("estimate", "--n-gpus", "many"), 'n_gpus: "many" is text'),
    (("estimate", "--flash-attention", "maybe"), 'flash_attention: "maybe" is not a flag'),
    (("explain", "kv_cach_gib"), "did you mean kv_cache_gib"),
    (("--mfu", "nan"), "mfu: nan is not finite"),
])
def test_bad_input_exits_2_with_a_clear_message(args, message):
    out = gpu_tco(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow  # over 0.45 s
def test_catalog_listings():
    gpus = gpu_tco("gpus")
    assert gpus.returncode == 0 and "RTX-4090" in gpus.stdout and "165.2" in gpus.stdout
    a100 = next(line for line in gpus.stdout.splitlines() if line.startswith("A100-80GB-SXM "))
    assert " none " in a100  # no FP8 tensor cores: "none", not 0 TFLOPS
    models = json.loads(gpu_tco("models", "--json").stdout)
    assert any(m["name"] == "Mixtral-8x22B" and m["experts"] == 8 for m in models)
    assert all(m["source"] for m in models)


def test_explain_prints_formula_excel_and_inputs():
    out = gpu_tco("explain", "peak_train_gib_per_gpu", "--gpu", "A100-40GB-SXM")
    assert out.returncode == 0
    assert "formula: states_gib + activations_gib + logits_gib + overhead_train_gib" in out.stdout
    assert "Excel:   =states_gib+activations_gib+logits_gib+overhead_train_gib" in out.stdout


def test_installed_console_script_runs():
    """The `gpu-tco` entry point exists where the package is installed (the README's first command uses it)."""
    exe = Path(sys.executable).with_name("gpu-tco")
    if not exe.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"gpu-tco is not installed beside {sys.executable}; the README setup command installs it")
        pytest.skip("package not installed in this interpreter; CI installs it")
    out = subprocess.run([str(exe), "gpus"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "H100-SXM" in out.stdout


# --- a command line like the tools people know -------------------------------------------------

import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMAND_LINE_DOC = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")


def _block(heading: str, fence: str = "```", text: str = COMMAND_LINE_DOC) -> str:
    section = text[text.index(heading):]
    start = section.index(fence) + len(fence)
    return section[start:section.index("```", start)].strip("\n")


@pytest.mark.slow
def test_readme_usage_commands_run_as_written(tmp_path):
    """Every line of the Usage block of docs/command-line.md and of README's command-line example, run by a shell in
    a folder holding examples/ (exit 0)."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GPU_TCO_CONFIG_DIR": str(tmp_path / "config")}
    lines = [line for line in _block("## Usage").splitlines() if line.strip()]
    assert len(lines) >= 15
    readme = [line for line in _block("**Command line**", text=README).splitlines() if line.strip()]
    assert len(readme) >= 3
    lines += readme

    def run(line):
        return line, subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)

    with ThreadPoolExecutor(2) as pool:  # a line in both blocks runs once (the check of written files below reads all)
        for line, out in pool.map(run, dict.fromkeys(lines)):
            assert out.returncode == 0, (line, out.stderr[-500:])
            assert "Traceback" not in out.stderr
    assert (tmp_path / "plan.xlsx").exists() and (tmp_path / "gpu-tco.xlsx").exists()
    assert (tmp_path / "llama3-70b-lora.xlsx").exists()
    targets = [t for line in lines for t in re.findall(r"--(?:out|email-draft|screenshot|workbook) (\S+)", line)]
    assert len(targets) == len(set(targets)), targets  # two examples never write (and overwrite) one file


def test_command_line_docs_python_block_runs(tmp_path):
    code = _block("From Python", "```python")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'gpu: unknown "H1000"' in out.stdout


def test_readme_python_example_runs(tmp_path):
    code = _block("**Python**", "```python", text=README)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first.split()[1] in ("True", "False") and second.split()[0] in ("rent", "buy")


@pytest.mark.slow
@pytest.mark.parametrize("args, first_words", [
    (("estimate", "--seq-lenn", "2048"), "gpu-tco estimate: error: unrecognized arguments: --seq-lenn 2048 (see gpu-tco estimate --help)"),
    (("plan", "--top", "0"), "gpu-tco plan: error: argument --top: 0 is too small"),
    (("plan", "--top", "ten"), "gpu-tco plan: error: argument --top: 'ten' is not a whole number"),
    (("estimate", "--mode", "both"), "gpu-tco estimate: error: argument --mode: invalid choice"),
    (("frobnicate",), "gpu-tco: error: argument COMMAND: invalid choice"),
    # an option the main job does not take: its value is not read as a command, and the line says where to name a GPU
    (("--model", "Llama-3-8B", "--gpu", "H100-SXM"), "gpu-tco: error: unrecognized arguments: --gpu H100-SXM; the main "
                                                     "job compares every GPU; to name some: gpu-tco plan --gpus A,B"),
    (("--foo", "3"), "gpu-tco: error: unrecognized arguments: --foo 3 (see gpu-tco --help)"),
])
def test_parse_errors_are_one_line_with_a_hint(args, first_words):
    out = gpu_tco(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(first_words), out.stderr
    assert "--help" in lines[0] and not out.stdout


@pytest.mark.slow
def test_each_command_lists_only_the_inputs_it_uses_grouped():
    est = gpu_tco("estimate", "--help").stdout
    tco = gpu_tco("tco", "--help").stdout
    plan = gpu_tco("plan", "--help").stdout
    # the job's hours depend on what connects the GPUs, so estimate takes the offer (its network); its serving figures
    # (cost per million tokens rented and owned) take the prices too, and the serving demand and targets
    assert "--seq-len" in est and "--offer " in est and "--usd-per-kwh" in est and "--usd-per-gpu-hour-rented" in est
    assert "--tpot-slo-ms" in est and "--requests-per-s" in est and "--tpot-slo-ms" in plan and "--task" in plan
    assert "--usd-per-kwh" in tco and "--seq-len" not in tco and "--context-tokens" not in tco
    assert "--seq-len" in plan and "--deadline-hours" in plan and "--n-gpus" not in plan and "--gpu " not in plan
    assert "--cost-tolerance-pct" in plan and "--cost-tolerance-pct" in gpu_tco("--help").stdout  # read by the planner itself
    for heading in ("the job (defaults in brackets):", "hardware (defaults in brackets):"):
        assert heading in est
    assert "owning (defaults in brackets):" in tco
    assert len(re.findall(r"^  --", est, re.M)) < len(re.findall(r"^  --", gpu_tco("workbook", "--help").stdout, re.M))


@pytest.mark.slow
def test_reports_wrap_descriptions_and_say_never():
    out = gpu_tco("breakeven", "--gpu", "RTX-4090", "--usd-per-gpu-hour-rented", "0.01")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("payback_months"))
    assert " never " in line and "-1" not in line
    tco = gpu_tco("tco").stdout
    assert "Rest of the servers = GPU cards x server_overhead_pct +\n" in tco  # wrapped at a word, continued below
    assert "                                                    other_hardware_usd" in tco


@pytest.mark.slow
def test_main_job_checks_everything_before_printing(tmp_path):
    bad = gpu_tco("--seq-len", "-1")
    assert bad.returncode == 2 and bad.stdout == "" and "seq_len: -1 is too small" in bad.stderr
    missing = gpu_tco("--workbook", str(tmp_path / "nowhere" / "x.xlsx"))
    assert missing.returncode == 2 and missing.stdout == "" and "does not exist" in missing.stderr


def test_model_and_gpu_names_as_people_type_them():
    from gpu_tco import core
    base = core.evaluate(model="Llama-3-70B")["params_total"]
    for typed in ("meta-llama/Meta-Llama-3-70B-Instruct", "llama3-70b-chat", "Meta-Llama-3-70B-hf", "llama 3 70b"):
        assert core.evaluate(model=typed)["params_total"] == base, typed
    assert core.evaluate(model="8x7B")["params_total"] == core.evaluate(model="Mixtral-8x7B")["params_total"]
    assert core.evaluate(model="70B")["params_total"] == core.evaluate(model=70)["params_total"]
    assert core.evaluate(model="70b")["model_is_estimate"] == 1
    assert core.evaluate(gpu="h100 80gb")["gpu_memory_gib"] == 80 and core.resolve_inputs({"gpu": "A100 40GB"})["gpu"] == "A100-40GB-SXM"
    out = gpu_tco("estimate", "--model", "meta-llama/Meta-Llama-3-70B-Instruct")
    assert out.returncode == 0 and "is read as Llama-3-70B" in out.stderr and "-Instruct" in out.stderr
    with pytest.raises(core.InputError) as err:
        core.evaluate(gpu="H100 80GBx")
    assert "did you mean H100-" in str(err.value) and "A100" not in str(err.value).split("allowed")[0]


@pytest.mark.slow
def test_offers_for_a_family_lists_every_variant():
    out = gpu_tco("offers", "--gpu", "h100")
    assert out.returncode == 0
    assert "matches 3 GPUs: H100-SXM, H100-PCIe, H100-NVL" in out.stdout
    header = next(line for line in out.stdout.splitlines() if line.startswith("offer "))
    start, end = header.index(" GPU ") + 1, header.index(" GPUs ")  # the GPU column, by the header's positions
    listed = {line[start:end].strip() for line in out.stdout.splitlines() if " H100-" in line and "matches" not in line}
    assert {"H100-SXM", "H100-NVL"} <= listed
    one = gpu_tco("offers", "--gpu", "H100-PCIe")
    assert "matches" not in one.stdout and "H100-SXM " not in one.stdout


def test_version_comes_from_the_package_metadata():
    from importlib.metadata import version
    out = gpu_tco("--version")
    assert out.stdout.strip() == f"gpu-tco {version('gpu-tco')}"
    import gpu_tco as pkg
    assert pkg.__version__ == version("gpu-tco")


@pytest.mark.slow
def test_ctrl_c_exits_130_with_one_line():
    proc = subprocess.Popen([sys.executable, "-m", "gpu_tco", "bench"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    time.sleep(1.0)  # the command started (about 0.2 s) and timing the engine
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == "gpu-tco: interrupted"


@pytest.mark.parametrize("args, said", [
    (["--epochs", "1", "--buy", "1"], "unrecognized arguments: --buy 1; the main job ranks purchases with --consider-buying 1"),
    (["--model", "H100-SXM", "--gpu", "H100-SXM"], "unrecognized arguments: --gpu H100-SXM; the main job compares every GPU"),
    (["--gpu", "O'Brien"], "unrecognized arguments: --gpu O'Brien; the main job compares every GPU"),
    (["--foo=bar", "baz"], "argument COMMAND: invalid choice: 'baz'"),  # (baz is not --foo's value: a command, unknown)
    (["--json", "junk"], "argument COMMAND: invalid choice: 'junk'"),
])
def test_the_value_of_an_option_the_main_job_does_not_take_is_named_with_its_option(args, said, capsys):
    """The token argparse read as the command is found where it follows an option the parser does not know, not at an
    earlier option's value that happens to be the same text."""
    from gpu_tco.cli import build_parser
    parser = build_parser()
    parser.argv = args
    with pytest.raises(SystemExit) as stop:
        parser.parse_known_args(args)
    assert stop.value.code == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"gpu-tco: error: {said}") and "\n" not in line, line


def test_the_bench_times_gpu_tco_and_llm_analysis_in_alternating_runs():
    """The ratio to llm-analysis compares the best run of each, so their runs alternate: both bests then come from the
    same stretch of the machine's speed (docs/benchmarks.md)."""
    from gpu_tco import bench
    calls: list[str] = []
    ours, theirs = bench._timed_together_us(lambda: calls.append("ours"), 3, lambda: calls.append("theirs"), 2, repeats=4)
    assert calls == ["ours", "theirs"] + (["ours"] * 3 + ["theirs"] * 2) * 4  # one warm-up call each, then in turn
    assert ours.runs == theirs.runs == 4
    assert 0 < ours <= ours.median and 0 < theirs <= theirs.median


@pytest.mark.slow  # over 0.45 s
def test_presets_wrap_whole_pairs_and_help_says_auto():
    """`presets` wraps its rows between name=value pairs (nothing is cut), and --help shows "default: auto"
    for every input whose 0 means automatic (core.auto), a number for the others."""
    from gpu_tco.core.auto import AUTO_QUANTITY
    from gpu_tco.core.presets import PRESETS
    out = gpu_tco("presets")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n\nUse one")[0].splitlines()[2:]
    column = lines[0].index(lines[0].split()[1])  # where the second column starts
    shown, name = {}, None
    for line in lines:
        if line[:column].strip():
            name = line[:column].strip()
        shown.setdefault(name, []).append(line[column:].strip())
    assert list(shown) == list(PRESETS)
    for name, p in PRESETS.items():
        assert " ".join(shown[name]) == ", ".join(f"{k}={v}" for k, v in p.items()), name  # every pair, whole
        assert all(part.endswith(",") for part in shown[name][:-1]), shown[name]  # broken between pairs only
    assert max(len(line) for line in lines) <= 120
    text = " ".join(gpu_tco("plan", "--help").stdout.split())
    for name in AUTO_QUANTITY:
        option = f"--{name.replace('_', '-')} V "
        if option in text:
            # the option's own text ends with its default (a group's title may follow the group's last option)
            assert re.findall(r"\[[^\]]*\]", text.split(option)[1].split(" --")[0])[-1] == "[default: auto]", name
    assert "--mfu V" in text and "--usd-per-gpu-hour-rented V" in text
    assert text.split("--seq-len V ")[1].split(" --")[0].endswith("[4096]")


@pytest.mark.slow  # over 0.45 s
def test_main_job_and_e_mail_draft_of_a_serving_scenario_say_the_serving_answer(tmp_path):
    """`gpu-tco --scenario serve.json` answers the serving question (core's sentence) and writes the serving workbook;
    `gpu-tco workbook --email-draft` drafts the same answer."""
    import email
    from email import policy

    from openpyxl import load_workbook

    from gpu_tco.core import read_scenario, serve_plan, split_scenario
    scenario = ROOT / "examples" / "serve-llama3-70b.json"
    inputs, gpus = split_scenario(read_scenario(scenario))
    answer = serve_plan(inputs, gpus=gpus)["recommendation"]
    out = gpu_tco("--scenario", str(scenario), "--workbook", str(tmp_path / "main.xlsx"))
    assert out.returncode == 0, out.stderr
    assert answer in out.stdout.splitlines() and "Workbook (every number a live Excel formula)" in out.stdout
    assert "Fine-tune" not in out.stdout and "Recommended for" not in out.stdout  # not the training comparison
    book = load_workbook(tmp_path / "main.xlsx")
    assert "Serving" in book.sheetnames and book["Start"]["A7"].value.startswith("=IF(")
    out = gpu_tco("workbook", "--scenario", str(scenario), "--out", str(tmp_path / "w.xlsx"), "--email-draft", str(tmp_path / "d.eml"))
    assert out.returncode == 0, out.stderr
    message = email.message_from_bytes((tmp_path / "d.eml").read_bytes(), policy=policy.default)
    assert message["Subject"] == "Serving plan: Llama-3-70B"
    body = message.get_body(("plain",)).get_content()
    assert f"Answer: {answer}" in body.replace("\r\n", "\n")


def test_an_option_before_the_command_is_refused_not_dropped():
    """argparse lets a command's own defaults replace the main job's options given before it: `gpu-tco --restarts 5
    explain job_wall_hours` answered for 0 restarts.  Such an option is refused in one line that says where it goes."""
    out = gpu_tco("--restarts", "5", "explain", "job_wall_hours")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "--restarts comes before the command; put it after: gpu-tco explain ... --restarts" in out.stderr
    after = gpu_tco("explain", "job_wall_hours", "--restarts", "5")
    assert after.returncode == 0 and "job_start_hours = 0.60 h" in after.stdout  # (1 + 5) x 6 minutes


@pytest.mark.slow  # five fresh Python processes
def test_the_command_freezes_what_its_imports_built_and_a_call_from_python_does_not():
    """Run as a command (no argv given: the console script, python -m gpu_tco), main() moves what the imports built
    out of the collector's reach (gc.freeze), and the command's imports themselves run without the collector; called
    with arguments from Python (a program, the tests) it leaves the caller's collector as it was."""
    code = ("import contextlib, gc, io, sys\nfrom gpu_tco import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    cli.main(['explain', 'own_tco_usd'])\n    called = gc.get_freeze_count()\n"
            "    sys.argv = ['gpu-tco', 'explain', 'own_tco_usd']\n    code = cli.main()\n"
            "print(called, gc.get_freeze_count() > 10000, code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True", "0"], out.stdout
    # the command's own imports run without the collector (no pass while the engine loads), which is on again once they
    # are done, what they built frozen; a program named otherwise, even like the command, keeps the collector as it was,
    # and so does the command where the collector was off; a failed import leaves it on
    code = ("import gc, sys\nhow = sys.argv[2]\nsys.argv = [sys.argv[1], 'explain', 'own_tco_usd']\npasses = []\n"
            "def seen(phase, info):  # a pass while the engine loads: core imported, the command line's main not yet defined\n"
            "    if phase == 'start' and sys.modules.get('gpu_tco.core') and not hasattr(sys.modules.get('gpu_tco.cli'), 'main'):\n"
            "        passes.append(info)\n"
            "gc.callbacks.append(seen)\nif how == 'off':\n    gc.disable()\n"
            "if how == 'broken':\n    sys.modules['gpu_tco.core'] = None\n"
            "try:\n    from gpu_tco import cli\nexcept ImportError:\n    print('refused', end=' ')\n"
            "print(len(passes) > 0, gc.isenabled(), gc.get_freeze_count() > 10000)")
    for argv0, how, expected in (("gpu-tco", "", ["False", "True", "True"]), ("gpu-tco-batch", "", ["True", "True", "False"]),
                                 ("gpu-tco", "off", ["False", "False", "False"]),
                                 ("gpu-tco", "broken", ["refused", "False", "True", "False"])):
        out = subprocess.run([sys.executable, "-c", code, argv0, how], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.split() == expected, (argv0, how, out.stdout + out.stderr)


def test_a_small_figure_keeps_its_digits_in_the_command_lines_tables():
    """A tiny job's efficiency (SmolLM2 135M LoRA at 256 tokens on an H100: about 0.003) printed to two decimals read 0.00,
    as if it were unknown or nothing; a nonzero value that would round to 0.00 keeps its significant digits."""
    from gpu_tco.commands.common import _fmt
    assert _fmt(0.003023) == "0.003023" and _fmt(0.0049) == "0.0049" and _fmt(0.37) == "0.37" and _fmt(0.0) == "0"
    out = subprocess.run([sys.executable, "-m", "gpu_tco", "estimate", "--method", "lora", "--model", "SmolLM2-135M",
                          "--seq-len", "256", "--n-gpus", "1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("GPU efficiency over the whole step"))
    assert float(line.split()[-1]) > 0
