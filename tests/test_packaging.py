"""The built wheel, installed into a fresh virtual environment: one namespace, the main job runs."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds the wheel and the source archive, installs into fresh environments

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_into_a_fresh_environment_under_one_namespace(tmp_path, built_wheel):
    wheel = built_wheel
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
        assert "gpu_tco/core/data/gpus.csv" in z.namelist() and "gpu_tco/addin/udfs.py" in z.namelist()
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gpu_tco"}

    venv = tmp_path / "venv"
    # a fresh environment without its own pip; this pip installs into it (pip --python), which is faster
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    with zipfile.ZipFile(wheel) as z:  # what pip would install with it
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    assert {r.split(">")[0] for r in requires if "extra ==" not in r} == {"numpy", "openpyxl"}
    assert any(r.startswith("pyside6-essentials") or r.startswith("PySide6-Essentials") for r in requires if 'extra == "gui"' in r)
    # the wheel itself is installed for real; its dependencies come from the test environment through a
    # .pth placed after the fresh environment's own site-packages (the wheel's gpu_tco is the one imported)
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", "--no-deps", str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    site = Path(subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    assert not {"core", "addin", "gui", "workbooks", "installer"} & {p.name for p in site.iterdir()}
    import numpy
    (site / "zz-test-deps.pth").write_text(str(Path(numpy.__file__).resolve().parents[1]) + "\n")

    work = tmp_path / "work"
    work.mkdir()
    main = subprocess.run([str(bin_dir / "gpu-tco")], capture_output=True, text=True, cwd=work, timeout=120)
    assert main.returncode == 0, main.stderr
    assert "Recommended for lora:" in main.stdout and (work / "gpu-tco.xlsx").stat().st_size > 50_000
    api = subprocess.run([str(bin_dir / "python"), "-c", "import gpu_tco; print(gpu_tco.__version__, gpu_tco.plan()['recommended']['gpu'])"],
                         capture_output=True, text=True, cwd=work, timeout=120)
    assert api.returncode == 0, api.stderr
    version = subprocess.run([str(bin_dir / "gpu-tco"), "--version"], capture_output=True, text=True, timeout=60).stdout.split()[-1]
    assert api.stdout.split()[0] == version != "0+unknown"

    # the commands that read the package's own files find them inside the wheel: the xlwings Lite files (the
    # same bundle as from the project) and the quantities reference
    lite = subprocess.run([str(bin_dir / "gpu-tco"), "addin", "lite", "--out", "lite"], capture_output=True, text=True, cwd=work,
                          timeout=120)
    assert lite.returncode == 0, lite.stderr
    from gpu_tco.addin.lite import main_py
    assert (work / "lite" / "main.py").read_text(encoding="utf-8") == main_py()
    docs = subprocess.run([str(bin_dir / "gpu-tco"), "docs", "--out", "q.md"], capture_output=True, text=True, cwd=work, timeout=120)
    assert docs.returncode == 0, docs.stderr
    from gpu_tco.core.docs import render
    assert (work / "q.md").read_text(encoding="utf-8") == render()
    assert not list(site.glob("gpu_tco/docs")) and not list(site.rglob("*.tmp"))  # nothing written into the package

    # the desktop form from the wheel (Qt, like NumPy, from the test environment)
    shot = tmp_path / "form.png"
    form = subprocess.run([str(bin_dir / "gpu-tco"), "form", "--screenshot", str(shot)], capture_output=True, text=True, cwd=work,
                          timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "GPU_TCO_CONFIG_DIR": str(tmp_path)})
    assert form.returncode == 0, form.stderr
    assert shot.stat().st_size > 20_000
    where = subprocess.run([str(bin_dir / "python"), "-c", "import gpu_tco.gui.window as w; print(w.__file__)"],
                           capture_output=True, text=True, timeout=60, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert where.stdout.startswith(str(site))
