"""Installers: the shell installer and uninstaller run for real against a temporary home; the PowerShell
scripts are checked for structure (no PowerShell here); the frozen form is built and started."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import frozen
import lo
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from gpu_tco.install_addin import read_conf, unwritable

pytestmark = pytest.mark.slow  # real installs, the release folder, PyInstaller: tens of seconds

ROOT = Path(__file__).resolve().parents[1]
INSTALLER = ROOT / "installer"


def conf_text(pairs: dict) -> str:
    return "".join(f'"{k}","{v}"\n' for k, v in pairs.items())


def install_env(home: Path, **more) -> dict:
    """The environment the installers run in: gpu-tco itself is installed for real from the wheel; its
    dependencies (NumPy, openpyxl, xlwings) come from the test environment instead of being unpacked again
    (GPU_TCO_PIP_ARGS, PYTHONPATH).  The machine's rustup proxies (~/.cargo/bin) are left off PATH: pip runs
    `rustc --version` for its user agent, and the proxy writes ~/.rustup into the temporary home."""
    import numpy
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if ".cargo" not in p)
    return {"HOME": str(home), "PATH": path, "PYTHON": sys.executable, "GPU_TCO_EXTRAS": "excel",
            "GPU_TCO_PIP_ARGS": "--no-deps", "PYTHONPATH": str(Path(numpy.__file__).resolve().parents[1]), "LANG": "C.UTF-8",
            "QT_QPA_PLATFORM": "offscreen", **more}


def pipless_env(base: Path, home: Path, **more) -> dict:
    """An installer environment whose Python has no pip (as Debian's python3 with python3-venv): the installer
    gives the new environment its own pip (ensurepip), and pip's wrappers get the environment's path.  The
    dependencies come from links to the test environment's packages, pip's left out."""
    import numpy
    site = Path(numpy.__file__).resolve().parents[1]
    deps = base / "deps-without-pip"
    if not deps.exists():
        deps.mkdir(parents=True)
        for name in ("numpy", "numpy.libs", "openpyxl", "et_xmlfile", "xlwings"):
            if (site / name).exists():
                (deps / name).symlink_to(site / name)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base / "python-without-pip")], check=True, timeout=120)
    return install_env(home, PYTHON=str(base / "python-without-pip" / "bin" / "python"), PYTHONPATH=str(deps), **more)


def desktop_exec_argv(value: str) -> list[str]:
    """The argument vector of a desktop entry's Exec value, unescaped as the freedesktop Desktop Entry
    Specification 1.5 says (https://specifications.freedesktop.org/desktop-entry-spec/latest/, "The Exec key"):
    first the string escapes (\\s \\n \\t \\r \\\\), then the quoting (\\" \\` \\$ \\\\ inside double quotes),
    then %% becomes %; a field code (%f) stays as it is."""
    text = re.sub(r"\\([sntr\\])", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}[m.group(1)], value)
    argv, i = [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
            continue
        arg = ""
        if text[i] == '"':
            i += 1
            while text[i] != '"':
                if text[i] == "\\":
                    assert text[i + 1] in '"`$\\', f"{text[i + 1]!r} may not be escaped in a quoted Exec argument"
                    i += 1
                arg += text[i]
                i += 1
            i += 1
        else:
            while i < len(text) and text[i] != " ":
                assert text[i] not in '"`$\\\'<>~|&;*?#()', f"{text[i]!r} must be quoted in Exec"
                arg += text[i]
                i += 1
        argv.append(arg if arg == "%f" else arg.replace("%%", "%"))
    return argv


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folder``, symbolic links not followed."""
    return {str(p.relative_to(folder)): (None if p.is_dir() and not p.is_symlink() else p.read_bytes() if p.is_file() else os.readlink(p))
            for p in folder.rglob("*")}


def test_shell_installer_and_uninstaller_for_real(tmp_path, built_wheel):
    home = tmp_path / "home"
    (home / ".xlwings").mkdir(parents=True)
    mine = {"LICENSE_KEY": "abc-123", "INTERPRETER_WIN": r"C:\mine\python.exe"}  # the user's own settings
    # a comment, Windows line ends and no final line end: the file comes back byte for byte
    original = ('# my settings\r\n' + conf_text(mine).replace("\n", "\r\n")).rstrip("\r\n").encode()
    (home / ".xlwings" / "xlwings.conf").write_bytes(original)
    env = install_env(home)
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
    assert os.access(command, os.X_OK) and os.access(launcher, os.X_OK) and (install / "uninstall.sh").is_file()
    version = subprocess.run([str(command), "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("gpu-tco ")
    entry = desktop.read_text()
    assert "[Desktop Entry]" in entry and f'Exec="{launcher}" %f' in entry and "Terminal=false" in entry
    assert f"'{install / 'venv' / 'bin' / 'python'}' -m gpu_tco.gui" in launcher.read_text()
    conf = read_conf(home / ".xlwings" / "xlwings.conf")
    assert conf["UDF MODULES"] == "gpu_tco.addin.udfs"
    assert conf["INTERPRETER_MAC"] == str(install / "venv" / "bin" / "python")  # written: it was absent
    assert conf["LICENSE_KEY"] == mine["LICENSE_KEY"] and conf["INTERPRETER_WIN"] == mine["INTERPRETER_WIN"]  # kept
    assert (home / ".xlwings" / "xlwings.conf").read_bytes().startswith(b"# my settings\r\n")  # the comment too
    main = subprocess.run([str(command), "--workbook", ""], capture_output=True, text=True, env=env, timeout=120)
    assert main.returncode == 0 and "Recommended for lora:" in main.stdout

    # installed a second time over the first: replaced; then uninstalled: xlwings.conf is exactly as before
    again = subprocess.run(["sh", str(release / "install.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "replacing the gpu-tco installation" in again.stdout, again.stdout + again.stderr
    assert not (install / "venv" / "bin" / "pip").exists()  # the installing Python's pip filled it
    gone = subprocess.run(["sh", str(install / "uninstall.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not install.exists() and not command.exists() and not command.is_symlink() and not desktop.exists()
    assert (home / ".xlwings" / "xlwings.conf").read_bytes() == original
    assert snapshot(home) == {".xlwings": None, ".xlwings/xlwings.conf": original}  # the folders it created are gone too

    again = subprocess.run(["sh", str(INSTALLER / "uninstall.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "no gpu-tco installation" in again.stdout  # never removes what it did not create


def test_xlwings_settings_are_undone_key_by_key_once_the_user_changed_the_file(tmp_path, capsys):
    """The installers' set-up of xlwings.conf, in this process: installed twice (the record keeps the first
    state), then the user edits the file: uninstalling takes out only the values gpu-tco wrote."""
    from gpu_tco.install_addin import main
    conf, record = tmp_path / ".xlwings" / "xlwings.conf", tmp_path / "record.json"
    conf.parent.mkdir()
    conf.write_bytes(b'"LICENSE_KEY","abc"\r\n"UDF MODULES","my_module"\r\n# mine\r\n')
    for _ in range(2):
        assert main(["--no-excel", "--home", str(tmp_path), "--record", str(record)]) == 0
    assert read_conf(conf)["UDF MODULES"] == "gpu_tco.addin.udfs"
    conf.write_bytes(conf.read_bytes() + b'"LOG FILE","/tmp/x.log"\n')
    assert main(["--uninstall", "--home", str(tmp_path), "--record", str(record)]) == 0
    assert conf.read_bytes() == b'"LICENSE_KEY","abc"\r\n"UDF MODULES","my_module"\r\n# mine\r\n"LOG FILE","/tmp/x.log"\n'
    # a value holding U+0085 or U+2028 is one line, as xlwings reads it
    odd = tmp_path / "odd"
    (odd / ".xlwings").mkdir(parents=True)
    (odd / ".xlwings" / "xlwings.conf").write_bytes('"LICENSE_KEY","a\x85b\u2028c"\r"UDF MODULES","mine"'.encode())
    assert read_conf(odd / ".xlwings" / "xlwings.conf") == {"LICENSE_KEY": "a\x85b\u2028c", "UDF MODULES": "mine"}
    # xlwings.conf as a link into a dotfiles folder: written through the link, given back byte for byte, still a link
    dotfiles = tmp_path / "dotfiles" / "xlwings.conf"
    dotfiles.parent.mkdir()
    dotfiles.write_bytes(b'"LICENSE_KEY","abc"\n')
    linked = tmp_path / "linked"
    (linked / ".xlwings").mkdir(parents=True)
    (linked / ".xlwings" / "xlwings.conf").symlink_to(dotfiles)
    assert main(["--no-excel", "--home", str(linked), "--record", str(tmp_path / "linked.json")]) == 0
    assert (linked / ".xlwings" / "xlwings.conf").is_symlink() and b"UDF MODULES" in dotfiles.read_bytes()
    assert main(["--uninstall", "--home", str(linked), "--record", str(tmp_path / "linked.json")]) == 0
    assert (linked / ".xlwings" / "xlwings.conf").is_symlink() and dotfiles.read_bytes() == b'"LICENSE_KEY","abc"\n'
    # a path xlwings.conf cannot hold (a double quote) or that xlwings would expand ($NAME): skipped, said, file untouched
    assert unwritable('/home/a"b/python') and unwritable("/home/$NO_SUCH_VARIABLE/python") and unwritable("C:\\%USERNAME%\\python.exe")
    assert unwritable("/home/a\nb") and unwritable("/home/${HOME}")
    assert unwritable("/home/50% off $ `x`/python") is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["--uninstall", "--home", str(tmp_path), "--record", str(bad)]) == 2
    assert "cannot be read" in capsys.readouterr().err


def test_installer_refuses_what_is_not_its_own_and_a_failed_install_leaves_nothing(tmp_path, built_wheel):
    """Each refusal comes before anything is created; a failure after the environment exists removes it all."""
    home = tmp_path / "home"
    docs, bin_dir = home / "Documents", home / ".local" / "bin"
    docs.mkdir(parents=True)
    bin_dir.mkdir(parents=True)
    (docs / "letter.txt").write_text("mine")
    (bin_dir / "gpu-tco").write_text("#!/bin/sh\necho my own gpu-tco\n")
    (home / ".xlwings").mkdir()
    (home / ".xlwings" / "xlwings.conf").write_text('"LICENSE_KEY","abc"\n')
    before = snapshot(home)
    script = str(INSTALLER / "install.sh")
    cases = [  # (settings, what the one-line message says)
        ({"GPU_TCO_HOME": str(docs), "GPU_TCO_BIN": str(home / "bin2")}, f"{docs} exists and is not empty"),
        ({}, f"{bin_dir / 'gpu-tco'} already exists and was not written by this installer"),
        ({"GPU_TCO_HOME": str(home / "new\nline"), "GPU_TCO_BIN": str(home / "bin2")}, "holds a control character"),
        ({"GPU_TCO_SYSTEM": "beos"}, "allowed: macos, linux"),
    ]
    for overrides, message in cases:
        run = subprocess.run(["sh", script, str(built_wheel)], env=install_env(home, **overrides), capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr, (overrides, run.stdout + run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert snapshot(home) == before, overrides
    # pip fails after the environment was created (no such wheel): everything created is removed again
    run = subprocess.run(["sh", script, str(tmp_path / "gpu_tco-9-py3-none-any.whl")], capture_output=True, text=True, timeout=300,
                         env=install_env(home, GPU_TCO_BIN=str(home / "bin2"), GPU_TCO_PIP_ARGS="--no-deps --no-index"))
    assert run.returncode == 2 and "pip could not install" in run.stderr and "removing what it had created" in run.stdout, run.stdout
    assert snapshot(home) == before
    # Ctrl-C (SIGINT to the whole process group) once the environment exists, while pip installs: exit 130,
    # everything removed again, and no traceback from the interrupted pip
    import signal
    started = subprocess.Popen(["sh", script, str(built_wheel)], env=install_env(home, GPU_TCO_BIN=str(home / "bin2")),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = ""
    while "installing " not in seen and started.poll() is None:  # the line said just before pip starts
        seen += started.stdout.readline()
    _wait_for_pip(started)
    os.killpg(started.pid, signal.SIGINT)
    out = seen + started.communicate(timeout=120)[0]
    assert started.returncode == 130 and "installation interrupted: removing what it had created" in out and "Traceback" not in out, out
    assert snapshot(home) == before


def _wait_for_pip(installer: subprocess.Popen, timeout_s: float = 60.0) -> None:
    """Until a pip process of the installer's session runs (Linux: /proc), so that a Ctrl-C lands while pip installs;
    a fixed wait raced a quick pip on a busy machine.  Elsewhere a short wait.  An installer that ended meanwhile
    returns at once (the caller's checks then show what it said)."""
    import time
    if not Path("/proc/self/stat").exists():
        time.sleep(0.3)
        return
    session = installer.pid
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and installer.poll() is None:
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                cmdline = (stat.parent / "cmdline").read_bytes()
            except OSError:  # gone meanwhile
                continue
            argv = cmdline.split(b"\0")
            if int(fields[3]) == session and b"install" in argv and any(a == b"pip" or a.endswith(b"/pip") for a in argv):
                return  # (fields[3]: the session id)
        time.sleep(0.01)
    if installer.poll() is None:
        raise AssertionError("pip never started")


def desktop_file_validate() -> str:
    """freedesktop's checker of desktop entries (Debian: desktop-file-utils), installed when missing and allowed."""
    exe = shutil.which("desktop-file-validate")
    if not exe and lo.apt_install(["desktop-file-utils"], "desktop-file-validate checks the applications-menu entry"):
        exe = shutil.which("desktop-file-validate")
    if exe:
        return exe
    if os.environ.get("CI"):
        pytest.fail("desktop-file-validate (desktop-file-utils) is required in CI and could not be installed")
    pytest.skip("desktop-file-validate is not installed and cannot be installed here (not root; CI installs it)")


# pieces of a hostile home folder's name: shell expansions and command substitutions (each would create
# INJECTED in the working folder if evaluated), desktop-entry field codes, quotes and escapes of every layer
# (shell, desktop entry, Python string, xlwings.conf), glob characters, line breaks (also U+0085 and U+2028, which
# are no control characters to the shell but end a line for str.splitlines), non-ASCII
HOSTILE = ["`touch INJECTED`", "$(touch INJECTED)", "; touch INJECTED;", "$PATH", "${HOME}", "$", "%h", "%f", "%%", "%USERNAME%",
           '"', "'", "\\", "\\N{x}", "\\x", "\\'", "'''", " ", "  ", "\n", "\t", "\x85", "\u2028", "ü", "日本", "~", "|", "&", "*", "?", "[a]", "#", "!",
           "-rf "]
home_names = st.lists(st.sampled_from(HOSTILE) | st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]),
                                                         min_size=1, max_size=3), min_size=1, max_size=6).map("".join).filter(
    lambda name: name not in (".", "..") and len(name.encode()) <= 120)


# each example runs pip (about 5 s of CPU): the four explicit names below and one drawn name per run, no shrinking (a
# failing name is printed as drawn); in CI the drawn name is the same every run (derandomize), elsewhere a new one
@settings(max_examples=1, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(name=home_names, system=st.sampled_from(["linux", "macos"]), with_conf=st.booleans(), own_pip=st.just(False))
# the reported case, with U+2028 in the desktop entry's Exec (one install for both: each costs about 5 s of CPU)
@example(name="bt `touch INJECTED` $PATH \\${HOME}Qáf\u2028%%* home", system="linux", with_conf=True, own_pip=False)
# install.sh's macOS steps, run here; the environment's own pip, whose wrappers hold its path
@example(name='mac "q" $(touch INJECTED) %h ü\x85\u2028', system="macos", with_conf=True, own_pip=True)
@example(name="new\nline `touch INJECTED`", system="linux", with_conf=False, own_pip=False)  # refused: a line break
@example(name="a:b `touch INJECTED`", system="linux", with_conf=False, own_pip=False)  # refused: Python's venv cannot take ':'
def test_install_and_uninstall_treat_a_hostile_home_folder_as_data(built_wheel, name, system, with_conf, own_pip):
    """Install, run what was installed, uninstall, in a home folder with a hostile name: nothing in the name is
    ever run, everything installed is removed and the user's own files are untouched, byte for byte."""
    base = Path(tempfile.mkdtemp(prefix="gpu-tco-home-"))
    try:
        home = base / name
        (home / ".local" / "share").mkdir(parents=True)
        (home / ".local" / "share" / "notes.txt").write_text("the user's")
        (home / ".local" / "bin").mkdir()
        (home / ".local" / "bin" / "other-tool").write_text("#!/bin/sh\n")
        if with_conf:
            (home / ".xlwings").mkdir()
            (home / ".xlwings" / "xlwings.conf").write_bytes(b'"LICENSE_KEY","abc"\n# mine, no final line end')
        before = snapshot(base)
        env = (pipless_env(base / ".." / (base.name + "-python"), home, GPU_TCO_SYSTEM=system) if own_pip
               else install_env(home, GPU_TCO_SYSTEM=system))
        run = subprocess.run(["sh", str(INSTALLER / "install.sh"), str(built_wheel)], cwd=base, env=env, capture_output=True,
                             text=True, timeout=600)
        refused = ("control character" if any(ord(c) < 32 or ord(c) == 127 for c in name) else "holds ':'" if ":" in name else None)
        if refused:
            assert run.returncode == 2 and refused in run.stderr and "Traceback" not in run.stderr, run.stderr
            assert len(run.stderr.strip().splitlines()) == 1, run.stderr
            assert snapshot(base) == before
            return
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stdout + run.stderr
        data = home / ("Library/Application Support" if system == "macos" else ".local/share")
        install = data / "gpu-tco"
        py = install / "venv" / "bin" / "python"
        launcher = install / "gpu-tco-form"
        # what was installed runs, and runs nothing else: the command, pip's wrappers (rewritten), the form's launcher
        runs = [[home / ".local" / "bin" / "gpu-tco", "--version"], [install / "venv" / "bin" / "gpu-tco", "--version"], [launcher, "--help"]]
        if own_pip:
            runs.append([install / "venv" / "bin" / "pip", "--version"])
        for argv in runs:
            ran = subprocess.run([str(a) for a in argv], cwd=base, env=env, capture_output=True, text=True, timeout=120)
            assert ran.returncode == 0 and ran.stdout.startswith(("gpu-tco ", "pip ", "usage: gpu-tco form")), (argv, ran.stdout + ran.stderr)
        if system == "linux":
            desktop = data / "applications" / "gpu-tco-form.desktop"
            check = subprocess.run([desktop_file_validate(), str(desktop)], capture_output=True, text=True, timeout=60)
            assert check.returncode == 0 and not check.stdout.strip(), check.stdout + check.stderr
            # a desktop entry's lines end at "\n" only (str.splitlines would also split at a U+2028 in the path)
            exec_value = next(line[5:] for line in desktop.read_text(encoding="utf-8").split("\n") if line.startswith("Exec="))
            assert desktop_exec_argv(exec_value) == [str(launcher), "%f"]
            conf = read_conf(home / ".xlwings" / "xlwings.conf")
            if unwritable(str(py)):
                assert "skipped the Excel settings" in run.stdout and "UDF MODULES" not in conf
            else:
                assert conf["UDF MODULES"] == "gpu_tco.addin.udfs" and conf["INTERPRETER_MAC"] == str(py)
        else:
            assert (home / "Applications" / "gpu-tco form.command").read_bytes() == launcher.read_bytes()
            assert "def GPU_TCO" in (install / "xlwings-lite" / "main.py").read_text(encoding="utf-8")
        gone = subprocess.run(["sh", str(install / "uninstall.sh")], cwd=base, env=env, capture_output=True, text=True, timeout=120)
        assert gone.returncode == 0, gone.stdout + gone.stderr
        assert snapshot(base) == before  # all of gpu-tco gone, the user's files as they were, nothing created by a name
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(base.parent / (base.name + "-python"), ignore_errors=True)


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
                 "gpu_tco.gui", "pythonw.exe", "uninstall.ps1", "$Extras", "is not empty", "already exists",
                 "installation failed: removing what it had created", "installed-files.txt"):
        assert step in install, step
    for step in ("--uninstall", "--record", "installed-files.txt", "Get-FileHash", "$Path.StartsWith($HomeDir"):
        assert step in uninstall, step
    # the same manifest format as the shell scripts
    header = "# gpu-tco installation manifest 1"
    for text in (install, uninstall, (INSTALLER / "install.sh").read_text(), (INSTALLER / "uninstall.sh").read_text()):
        assert header in text
    # paths are literal everywhere: no cmdlet that takes a path reads it as a wildcard pattern ([, ], * and ?
    # are allowed in Windows file names), no Invoke-Expression
    for text in (install, uninstall):
        code = _code_only(text)
        assert "Invoke-Expression" not in code and "iex " not in code
        for line in code.splitlines():
            for cmdlet in re.findall(r"\b(Test-Path|Remove-Item|Copy-Item|Get-ChildItem|Get-Content|Set-Content|Add-Content|Resolve-Path|"
                                     r"Set-Location|Get-FileHash|New-Item)\b", line):
                assert cmdlet != "New-Item" and "-LiteralPath" in line, line
    pwsh = next((p for p in ("pwsh", "powershell") if subprocess.run(["which", p], capture_output=True).returncode == 0), None)
    if pwsh:
        for script in ("install.ps1", "uninstall.ps1"):
            check = ("$e=$null; [System.Management.Automation.Language.Parser]::ParseFile("
                     f"'{INSTALLER / script}', [ref]$null, [ref]$e) | Out-Null; exit $e.Count")
            assert subprocess.run([pwsh, "-NoProfile", "-Command", check], timeout=120).returncode == 0, script


def test_sdist_carries_the_installers(tmp_path):
    # setuptools assembles the sdist in a folder named gpu_tco-VERSION under its working directory; built in the
    # checkout itself, that folder appeared and vanished under the tests that scan the checkout (ruff) at the same time
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__", "test-artifacts",
                                                              "*.xlsx", "tools"))
    out = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))",
                          str(tmp_path)], cwd=tree, capture_output=True, text=True, timeout=300)
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
        built = "in the set-up" if seconds is None else f"in {seconds:.0f} s (in the background)"
        lo.say(f"frozen form: built {built}, {size_mb:.0f} MB")
    finally:
        frozen.cleanup()
