"""Regenerate the module map and the layer list of docs/architecture.md from the code: each module's
line is the first paragraph of its docstring, its layer the import-linter layer pyproject.toml
puts it in.

    python3 tools/regen_architecture.py          # rewrite the generated parts of docs/architecture.md
    python3 tools/regen_architecture.py --check  # exit 1 when they differ from the code

A module's line is edited in its docstring, never in the doc; tests/test_architecture_doc.py runs
the check. Everything outside the markers is written by hand.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
MAP = (
    "<!-- module map: tools/regen_architecture.py writes this table from the module docstrings -->",
    "<!-- end of the module map -->",
)
LAYERS = (
    "<!-- layers: tools/regen_architecture.py writes this list from pyproject.toml -->",
    "<!-- end of the layers -->",
)


def layers(root: Path) -> list[list[str]]:
    """The layers contract, top to bottom, each a list of module names."""
    conf = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in conf["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [[m.strip() for m in re.split(r"[:|]", layer)] for layer in contract["layers"]]


def _kinds(root: Path) -> dict[str, str]:
    """Module name → its layer's kind: above the edges the layer's first module (main, cli,
    commands), then edge (the layer of observe.pipeline), below it core."""
    found: dict[str, str] = {}
    below = False
    for layer in layers(root):
        kind = (
            "core"
            if below
            else "edge"
            if "observe.pipeline" in layer
            else layer[0].removeprefix("observe.").strip("_")
        )
        below = below or kind == "edge"
        found.update(dict.fromkeys(layer, kind))
    return found


def _first_paragraph(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    return text.removeprefix("Edge: ").replace("|", "\\|")


def module_map(root: Path) -> str:
    kinds = _kinds(root)
    rows = ["| module | layer | job |", "| --- | --- | --- |"]
    pkg = root / "observe"
    for path in sorted(pkg.rglob("*.py"), key=lambda p: p.relative_to(pkg).parts):
        rel = path.relative_to(pkg)
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(["observe", *parts])
        while name not in kinds and "." in name:
            name = name.rpartition(".")[0]
        rows.append(f"| `{rel.as_posix()}` | {kinds.get(name, '—')} | {_first_paragraph(path)} |")
    return "\n".join(rows)


def layer_list(root: Path) -> str:
    out = []
    for layer in layers(root):
        out.append("- " + " · ".join(f"`{m.removeprefix('observe.')}`" for m in layer))
    return "\n".join(out)


def render(root: Path, text: str) -> str:
    for (start, end), body in ((MAP, module_map(root)), (LAYERS, layer_list(root))):
        i, j = text.index(start), text.index(end)
        text = text[: i + len(start)] + "\n" + body + "\n" + text[j:]
    return text


def main(argv: list[str]) -> int:
    old = DOC.read_text(encoding="utf-8")
    new = render(ROOT, old)
    if "--check" in argv:
        if new != old:
            print(f"differs: {DOC.relative_to(ROOT)} (run python3 tools/regen_architecture.py)")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
