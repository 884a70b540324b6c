"""The README's first command, run as a new user would: in a copy of the tree, it makes its own
virtual environment, installs observe there and diagnoses the shipped examples."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def first_command() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Two commands", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = [ln for ln in block.splitlines() if ln.strip()]
    i = next(k for k, ln in enumerate(lines) if ln.lstrip().startswith("# 1."))
    return lines[i + 1].strip()


def test_readme_first_command_makes_and_uses_a_venv() -> None:
    cmd = first_command()
    assert "python3 -m venv" in cmd and "pip install" in cmd and "observe diagnose examples/" in cmd


@pytest.mark.slow
def test_readme_first_command_works_in_a_fresh_copy(tmp_path: Path) -> None:
    if not shutil.which("git"):
        pytest.skip("git needed to list the tracked files")
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    work = tmp_path / "observe"
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (work / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / f)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_USER")}
    r = subprocess.run(
        ["bash", "-c", first_command()], cwd=work, capture_output=True, text=True, env=env, timeout=900
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (work / ".venv" / "bin" / "observe").exists()
    assert re.search(r"^== examples/", r.stdout, re.M), r.stdout[:2000]
    assert "kv_cache_saturated" in r.stdout
