"""vLLM's metric names are written only in the catalog (observe/metrics/{names,catalog,histograms,recent}.py): every other module takes a
name from observe.metrics.names' constants, and every `vllm:` name any module mentions (a docstring, a
message) is one the catalog knows."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from observe.metrics import names

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"vllm:[A-Za-z_][A-Za-z0-9_:]*")
CATALOG_MODULES = {"names.py", "catalog.py", "histograms.py", "recent.py"}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def literals(source: str) -> list[tuple[int, str, bool]]:
    """(line, vllm: name, in a docstring) for every name written in a string literal of `source`
    (f-strings' literal parts included)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        (node.lineno, name, id(node) in docs)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for name in NAME.findall(node.value)
    ]


def _modules() -> list[Path]:
    """Every observe module but the catalog's own (its notes name what it renamed)."""
    return sorted(
        p
        for p in (ROOT / "observe").rglob("*.py")
        if not (p.parent.name == "metrics" and p.name in CATALOG_MODULES)
    )


def _catalogued(name: str) -> bool:
    if name.endswith("_"):  # a family's common beginning (a connector's metrics)
        return any(c.startswith(name) for c in names.CATALOG)
    return names.split_sample_name(name) is not None


def test_the_scan_sees_a_bare_name_in_every_kind_of_literal():
    src = 'x = "vllm:foo_total"\ny = f"rate(vllm:bar{{a}}[5m]) {x}"\ndef f():\n    """reads vllm:baz."""\n'
    assert literals(src) == [(1, "vllm:foo_total", False), (2, "vllm:bar", False), (4, "vllm:baz", True)]


def test_no_module_outside_the_catalog_writes_a_metric_name():
    found = [
        f"{p.relative_to(ROOT)}:{line}: {name}"
        for p in _modules()
        for line, name, doc in literals(p.read_text(encoding="utf-8"))
        if not doc
    ]
    assert not found, "take these from observe.metrics.names' constants:\n" + "\n".join(found)


def test_every_name_a_docstring_mentions_is_catalogued():
    unknown = [
        f"{p.relative_to(ROOT)}:{line}: {name}"
        for p in _modules()
        for line, name, _ in literals(p.read_text(encoding="utf-8"))
        if not _catalogued(name)
    ]
    assert not unknown, (
        "not in the catalog (observe/metrics/{names,catalog,histograms,recent}.py):\n" + "\n".join(unknown)
    )


@pytest.mark.parametrize(
    "const", [c for c in dir(names) if c.isupper() and isinstance(getattr(names, c), str)]
)
def test_the_constants_are_catalogued(const: str):
    value = getattr(names, const)
    if value.startswith("vllm:"):
        assert _catalogued(value), f"names.{const} = {value!r}"
