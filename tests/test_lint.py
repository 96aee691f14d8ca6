"""The code passes ruff (pyflakes, pycodestyle errors, import order, bugbear; configured in pyproject.toml)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
