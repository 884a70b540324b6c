"""tools/move_modules.py, the rooms-by-job codemod (issue 34), on a tiny tree: the files moved with
git, every kind of mention rewritten, pyproject's lists tidied, and a second run refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests import regenkit

FILES = {
    "observe/__init__.py": '"""o."""\n',
    "observe/a.py": '"""a."""\n\nX = 1\n',
    "observe/c.py": '"""c."""\n\nY = 2\n',
    "observe/b.py": '"""b."""\n\nfrom observe import a, errors\nfrom observe.a import X\n\n\ndef f():\n    from observe import c as cc\n\n    return cc.Y + X + a.X\n',
    "observe/errors.py": '"""e."""\n',
    "tests/test_t.py": 'import observe.c\n\nTARGET = "observe.a.X"  # monkeypatch.setattr(TARGET, ...)\n'
    'PATH = ROOT / "observe" / "a.py"\nDOC = "observe/c.py and observe.ab and observe.b"\n',
    "docs/x.md": "`python -m observe.c` reads observe/a.py\n",
    "pyproject.toml": '[tool.importlinter]\nroot_package = "observe"\n\n[[tool.importlinter.contracts]]\n'
    'type = "layers"\nlayers = [\n  "observe.b",\n  "observe.a : observe.c : observe.errors",\n]\n\n'
    '[[tool.importlinter.contracts]]\nsource_modules = ["observe.a", "observe.c", "observe.b"]\n',
}
MOVES = {"observe.a": "observe.pkg.a2", "observe.c": "observe.c.impl"}
PACKAGES = {"observe.pkg": "The package of a.", "observe.c": "What c became."}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def test_the_codemod_on_a_tiny_tree(tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
    mm = regenkit.load("move_modules")
    assert mm.main(["--no-finish"], root=tmp_path, moves=MOVES, packages=PACKAGES, prose={}) == 0

    renamed = _git(tmp_path, "status", "--porcelain")
    assert (
        "R  observe/a.py -> observe/pkg/a2.py" in renamed
        and "R  observe/c.py -> observe/c/impl.py" in renamed
    )
    assert (tmp_path / "observe/pkg/__init__.py").read_text() == '"""The package of a."""\n'
    b = (tmp_path / "observe/b.py").read_text()
    assert "from observe import errors\nfrom observe.pkg import a2 as a\nfrom observe.pkg.a2 import X\n" in b
    assert "    from observe.c import impl as cc\n" in b
    t = (tmp_path / "tests/test_t.py").read_text()
    assert t.startswith("import observe.c.impl\n") and '"observe.pkg.a2.X"' in t
    assert 'ROOT / "observe" / "pkg" / "a2.py"' in t
    assert 'DOC = "observe/c/impl.py and observe.ab and observe.b"' in t  # a longer name is not a mention
    assert (tmp_path / "docs/x.md").read_text() == "`python -m observe.c.impl` reads observe/pkg/a2.py\n"
    conf = (tmp_path / "pyproject.toml").read_text()
    assert '  "observe.pkg : observe.c : observe.errors",\n' in conf  # each package whole: one layer holds it
    assert 'source_modules = ["observe.pkg", "observe.c", "observe.b"]' in conf

    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "moved")
    with pytest.raises(SystemExit, match="observe.a is not there"):
        mm.main([], root=tmp_path, moves=MOVES, packages=PACKAGES, prose={})


def test_the_mapping_keeps_every_package_and_name_apart() -> None:
    mm = regenkit.load("move_modules")
    news = list(mm.MOVES.values())
    assert len(set(news)) == len(news)
    assert all(n.rpartition(".")[0] in mm.PACKAGES or n.startswith("observe.parse.") for n in news)
    assert not set(news) & set(mm.MOVES)  # no new name is an old one: one pass rewrites each mention once
