"""No import circles in observe/ (issue 34): `advise` ↔ `rules/table`, `capacity/nonkv` ↔
`capacity/sizing`, `flags/installed` ↔ `manage/spec` and `tune` ↔ `tune/managed` were broken and
stay broken.

Two graphs, read from the source (ast), each must be free of cycles:

- every import a module writes, at the top, in a function or under TYPE_CHECKING (a circle of
  modules that need each other, whenever they are loaded);
- the imports that run when a module is loaded (module level, TYPE_CHECKING left out), where
  importing ``a.b.c`` also runs the ``__init__`` of ``a.b`` unless the importer lives in it (the
  circle Python only survives by the order modules happen to be loaded in).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(root: Path) -> dict[str, Path]:
    mods = {}
    for p in sorted((root / "observe").rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imports(tree: ast.Module, *, load_time: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module: all of them, or those that run when it is loaded."""
    if not load_time:
        return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        elif isinstance(node, ast.With):
            todo += node.body
    return found


def import_graph(root: Path, *, load_time: bool) -> dict[str, set[str]]:
    mods = _modules(root)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text()), load_time=load_time):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for name in names:
                target = known(name)
                if target is None:
                    continue
                targets.add(target)
                if load_time:  # loading a.b.c runs a.b's __init__ (unless the importer is inside a.b)
                    parent = target.rpartition(".")[0]
                    while parent and parent != "observe":
                        if not (mod == parent or mod.startswith(parent + ".")):
                            targets.add(parent)
                        parent = parent.rpartition(".")[0]
        targets.discard(mod)
        graph[mod] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_needs_another_that_needs_it() -> None:
    found = cycles(import_graph(ROOT, load_time=False))
    assert not found, f"import circles (imports anywhere in a module): {found}"


def test_no_circle_when_modules_load() -> None:
    found = cycles(import_graph(ROOT, load_time=True))
    assert not found, f"import circles at load time (a package's __init__ counts): {found}"


def test_the_check_sees_a_circle(tmp_path: Path) -> None:
    """Each graph finds the circles it is for: a lazy one, a type-only one, and one through a
    package's __init__ (the way flags/installed once reached manage/spec)."""
    files = {
        "observe/__init__.py": "",
        "observe/a.py": "def f():\n    from observe import b\n",
        "observe/b.py": "from observe.a import f\n",
        "observe/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from observe.d import X\n",
        "observe/d.py": "from observe import c\nX = 1\n",
        "observe/p/__init__.py": "from observe.p.spec import g\n",
        "observe/p/spec.py": "from observe.q.installed import h\ndef g(): pass\n",
        "observe/q/__init__.py": "",
        "observe/q/installed.py": "from observe.p.spec import g\ndef h(): pass\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cycles(import_graph(tmp_path, load_time=False)) == [
        ["observe.a", "observe.b"],
        ["observe.c", "observe.d"],
        ["observe.p.spec", "observe.q.installed"],
    ]
    (tmp_path / "observe/p/spec.py").write_text("def g(): pass\n")  # the circle only through p's __init__
    (tmp_path / "observe/q/installed.py").write_text("from observe.p.spec import g\n")
    (tmp_path / "observe/p/__init__.py").write_text(
        "from observe.p.spec import g\nfrom observe.q import installed\n"
    )
    assert cycles(import_graph(tmp_path, load_time=False)) == [
        ["observe.a", "observe.b"],
        ["observe.c", "observe.d"],
    ]
    assert cycles(import_graph(tmp_path, load_time=True)) == [["observe.p", "observe.q.installed"]]
