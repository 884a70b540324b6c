"""The CLI is formatted like the rest and passes its options by name (issue 34): no `# fmt: off`,
no `locals()`; a command whose options go to a function below it (`passes`) agrees with that
function on every name and type; every option's help is a line of helpstyle.HELP, and every line
there is an option's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from observe import helpstyle
from observe.cli import command
from observe.cli.common import BOUND, target

ROOT = Path(__file__).resolve().parents[1]


def test_no_fmt_off_and_no_locals_in_the_cli() -> None:
    for p in sorted((ROOT / "observe" / "cli").rglob("*.py")):
        text = p.read_text()
        assert "fmt: off" not in text, p.name
        calls = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)]
        assert not [c for c in calls if isinstance(c.func, ast.Name) and c.func.id in ("locals", "vars")], (
            p.name
        )


def test_every_bound_command_agrees_with_its_function() -> None:
    command()  # builds the whole CLI
    assert {m for _, m in BOUND} >= {
        "observe.commands.capacity",
        "observe.commands.sidecar",
        "observe.commands.tune",
    }
    for fn, module in BOUND:
        assert callable(target(fn, module))


def test_a_misspelt_or_mistyped_option_is_caught() -> None:
    def capacity(modle: str | None = None) -> None: ...

    with pytest.raises(TypeError, match=r"disagree on .*'model'.*'modle'"):
        target(capacity, "observe.commands.capacity")

    def sidecar(**_: object) -> None: ...

    import inspect

    real = next(fn for fn, m in BOUND if m == "observe.commands.sidecar")
    params = [
        p.replace(annotation="int") if p.name == "listen" else p
        for p in inspect.signature(real).parameters.values()
    ]
    sidecar.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=r"disagree on \['listen'\]"):
        target(sidecar, "observe.commands.sidecar")


def _options(cmd, path=()):
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from _options(sub, (*path, name))
    elif path:
        for p in cmd.params:
            yield " ".join(path), p.name, p.help


def test_every_option_has_its_help_line_and_every_line_an_option() -> None:
    seen = list(_options(command()))
    assert all(h for _, _, h in seen), [(c, n) for c, n, h in seen if not h]
    declared = {(c, n) for c, n, _ in seen}
    written = {(c, n) for c, opts in helpstyle.HELP.items() for n in opts}
    assert written <= declared, sorted(written - declared)
    assert {(c, n) for c, n, h in seen if h != helpstyle.HELP.get(c, {}).get(n)} <= {
        (c, "config") for c, _, _ in seen
    }  # --config says the same everywhere (observe.cli.common.CONFIG_HELP)
