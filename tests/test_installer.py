"""Installers: the shell installer and uninstaller run for real against a temporary home; the PowerShell
scripts are checked for structure (no PowerShell here); the frozen form is built and started."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import frozen
import lo

from gpu_tco.install_addin import read_conf

ROOT = Path(__file__).resolve().parents[1]
INSTALLER = ROOT / "installer"


def conf_text(pairs: dict) -> str:
    return "".join(f'"{k}","{v}"\n' for k, v in pairs.items())


def test_shell_installer_and_uninstaller_for_real(tmp_path, built_wheel):
    home = tmp_path / "home"
    (home / ".xlwings").mkdir(parents=True)
    mine = {"LICENSE_KEY": "abc-123", "INTERPRETER_WIN": r"C:\mine\python.exe"}  # the user's own settings
    (home / ".xlwings" / "xlwings.conf").write_text(conf_text(mine))
    # gpu-tco itself is installed for real from the wheel; its dependencies (NumPy, openpyxl, xlwings) are
    # taken from the test environment instead of being unpacked again (GPU_TCO_PIP_ARGS, PYTHONPATH)
    import numpy
    deps = str(Path(numpy.__file__).resolve().parents[1])
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PYTHON": sys.executable, "GPU_TCO_EXTRAS": "excel",
           "GPU_TCO_PIP_ARGS": "--no-deps", "PYTHONPATH": deps, "LANG": "C.UTF-8"}
    # the folder users download: built from the wheel, zipped, unzipped, then the documented bare command
    made = subprocess.run(["sh", str(INSTALLER / "make-release.sh"), str(tmp_path / "dist"), str(built_wheel)],
                          env={**env, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    archive = Path(made.stdout.strip().splitlines()[-1])
    with zipfile.ZipFile(archive) as z:
        names = {n.split("/", 1)[1] for n in z.namelist() if n.count("/") == 1 and not n.endswith("/")}
        assert names == {"INSTALL.txt", built_wheel.name, "install.sh", "uninstall.sh", "install.ps1", "uninstall.ps1"}
        z.extractall(tmp_path / "download")
    release = tmp_path / "download" / archive.stem
    assert "sh install.sh" in (release / "INSTALL.txt").read_text()
    run = subprocess.run(["sh", "install.sh"], cwd=release, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"installing {release / built_wheel.name}[excel]" in run.stdout  # the wheel beside the script
    data = home / ".local" / "share"
    install = data / "gpu-tco"
    command = home / ".local" / "bin" / "gpu-tco"
    desktop = data / "applications" / "gpu-tco-form.desktop"
    launcher = install / "gpu-tco-form"
    assert command.is_symlink() and os.access(launcher, os.X_OK) and (install / "uninstall.sh").is_file()
    version = subprocess.run([str(command), "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("gpu-tco ")
    entry = desktop.read_text()
    assert "[Desktop Entry]" in entry and f'Exec="{launcher}" %f' in entry and "Terminal=false" in entry
    assert f'"{install / "venv" / "bin" / "python"}" -m gpu_tco.gui' in launcher.read_text()
    conf = read_conf(home / ".xlwings" / "xlwings.conf")
    assert conf["UDF MODULES"] == "gpu_tco.addin.udfs"
    assert conf["INTERPRETER_MAC"] == str(install / "venv" / "bin" / "python")  # written: it was absent
    assert conf["LICENSE_KEY"] == mine["LICENSE_KEY"] and conf["INTERPRETER_WIN"] == mine["INTERPRETER_WIN"]  # kept
    main = subprocess.run([str(command), "--workbook", ""], capture_output=True, text=True, env=env, timeout=120)
    assert main.returncode == 0 and "Recommended for lora:" in main.stdout

    # the user adds a setting after installing; uninstalling keeps it and everything that was theirs
    (home / ".xlwings" / "xlwings.conf").write_text(conf_text({**conf, "LOG FILE": "/tmp/x.log"}))
    gone = subprocess.run(["sh", str(install / "uninstall.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not install.exists() and not command.exists() and not command.is_symlink() and not desktop.exists()
    assert read_conf(home / ".xlwings" / "xlwings.conf") == {**mine, "LOG FILE": "/tmp/x.log"}
    again = subprocess.run(["sh", str(INSTALLER / "uninstall.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "no gpu-tco installation" in again.stdout  # never removes what it did not create


def _code_only(text: str) -> str:
    """PowerShell without comments and string contents (for the structural check)."""
    text = re.sub(r"(?m)^\s*#.*$", "", text)
    text = re.sub(r'"(?:`.|""|[^"`])*"', '""', text)
    return re.sub(r"'[^']*'", "''", text)


def test_powershell_scripts_are_well_formed_and_do_what_the_shell_ones_do():
    """No PowerShell on this machine: the scripts are checked structurally here (ASCII, balanced brackets
    outside strings and comments, the same steps as install.sh) and were reviewed; where pwsh exists, its
    parser checks them too."""
    install, uninstall = (INSTALLER / "install.ps1").read_text(), (INSTALLER / "uninstall.ps1").read_text()
    for text in (install, uninstall):
        assert text.isascii()  # Windows PowerShell 5.1 reads BOM-less files as the ANSI code page
        code = _code_only(text)
        for open_, close in ("{}", "()", "[]"):
            assert code.count(open_) == code.count(close), open_ + close
    for step in ("LOCALAPPDATA", "-m venv", "pip install", "gpu_tco.install_addin", "--record", "CreateShortcut",
                 "gpu_tco.gui", "pythonw.exe", "uninstall.ps1", "$Extras"):
        assert step in install, step
    for step in ("--uninstall", "--record", "Remove-Item -Recurse -Force $HomeDir", "Programs"):
        assert step in uninstall, step
    pwsh = next((p for p in ("pwsh", "powershell") if subprocess.run(["which", p], capture_output=True).returncode == 0), None)
    if pwsh:
        for script in ("install.ps1", "uninstall.ps1"):
            check = ("$e=$null; [System.Management.Automation.Language.Parser]::ParseFile("
                     f"'{INSTALLER / script}', [ref]$null, [ref]$e) | Out-Null; exit $e.Count")
            assert subprocess.run([pwsh, "-NoProfile", "-Command", check], timeout=120).returncode == 0, script


def test_sdist_carries_the_installers(tmp_path):
    out = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))",
                          str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    name = out.stdout.strip().splitlines()[-1]
    with tarfile.open(tmp_path / name) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("pyproject.toml", "README.md", "installer/install.sh", "installer/uninstall.sh", "installer/make-release.sh",
                   "installer/install.ps1",
                   "installer/uninstall.ps1", "installer/gpu-tco-form.spec", "core/data/gpus.csv", "gui/window.py",
                   "examples/llama3-70b-lora.toml"):
        assert needed in names, needed


def test_frozen_form_builds_and_starts(tmp_path):
    code, app, seconds, log = frozen.result()
    try:
        assert code == 0, log[-3000:]
        exe = app / "gpu-tco-form"
        shot = tmp_path / "frozen.png"
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GPU_TCO_CONFIG_DIR": str(tmp_path)}
        run = subprocess.run([str(exe), "--scenario", str(ROOT / "examples" / "llama3-70b-lora.toml"), "--screenshot", str(shot)],
                             capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        assert shot.stat().st_size > 20_000
        size_mb = sum(f.stat().st_size for f in app.rglob("*") if f.is_file()) / 1e6
        lo.say(f"frozen form: built in {seconds:.0f} s (in the background), {size_mb:.0f} MB")
    finally:
        frozen.cleanup()
