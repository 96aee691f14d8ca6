"""The built wheel, installed into a fresh virtual environment: one namespace, the main job runs."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_into_a_fresh_environment_under_one_namespace(tmp_path):
    dist = tmp_path / "dist"
    # the test extra installs setuptools >= 68, so no isolated build environment is needed
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("gpu_tco-*.whl")
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist()}
        assert "gpu_tco/core/data/gpus.csv" in z.namelist() and "gpu_tco/addin/udfs.py" in z.namelist()
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gpu_tco"}

    venv = tmp_path / "venv"
    # a fresh environment without its own pip; this pip installs into it (pip --python), which is faster
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    site = Path(subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    assert not {"core", "addin", "gui", "workbooks", "installer"} & {p.name for p in site.iterdir()}

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
