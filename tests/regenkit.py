"""What the tests of the regenerators in tools/ share: the tool loaded as a module, and its --check run
as CI runs it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load(name: str) -> ModuleType:
    """tools/NAME.py as a module (its render functions called on a copy of the tree)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(name: str) -> str:
    """`python3 tools/NAME.py --check`: "" when the committed output is what the code says, else why not."""
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / f"{name}.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return "" if r.returncode == 0 else r.stdout + r.stderr
