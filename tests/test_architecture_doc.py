"""docs/architecture.md's module map and layer list are generated from the code (issue 34):
tools/regen_architecture.py writes them from the module docstrings and pyproject.toml's layers."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from tests import regenkit

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_doc_is_what_the_code_says() -> None:
    assert not regenkit.check("regen_architecture")


def test_every_module_has_its_line() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    for p in sorted((ROOT / "observe").rglob("*.py")):
        assert ast.get_docstring(ast.parse(p.read_text())), f"{p.relative_to(ROOT)} has no docstring"
        assert f"| `{p.relative_to(ROOT / 'observe').as_posix()}` |" in text


def test_a_docstring_changed_is_a_doc_changed(tmp_path: Path) -> None:
    """The check fails on drift: a module's docstring edited, or a module moved to another layer."""
    tool = regenkit.load("regen_architecture")
    shutil.copytree(
        ROOT / "observe", tmp_path / "observe", ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert tool.render(tmp_path, doc) == doc
    errs = tmp_path / "observe" / "errors.py"
    errs.write_text(errs.read_text().replace('"""', '"""Renamed | piped. ', 1))
    changed = tool.render(tmp_path, doc)
    assert "| `errors.py` | core | Renamed \\| piped. " in changed and changed != doc
    conf = tmp_path / "pyproject.toml"
    moved = (
        conf.read_text()
        .replace(" : observe.tee :", " :")
        .replace('"observe.commands",', '"observe.commands : observe.tee",')
    )
    conf.write_text(moved)
    assert "| `tee.py` | edge |" in changed and "| `tee.py` | commands |" in tool.render(tmp_path, doc)
