"""The import contracts CI enforces (`lint-imports`, pyproject.toml) cover every module: a new module
that is in no layer would escape them."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _children(name: str) -> set[str]:
    """The modules and packages directly inside package `name` (a dotted observe name)."""
    pkg = ROOT.joinpath(*name.split("."))
    mods = {f"{name}.{p.stem}" for p in pkg.glob("*.py") if p.stem != "__init__"}
    return mods | {f"{name}.{p.name}" for p in pkg.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _is_package(name: str) -> bool:
    return ROOT.joinpath(*name.split("."), "__init__.py").exists()


def _covered(name: str, named: set[str]) -> bool:
    """In a layer: named whole, or (a package whose modules sit in different layers, e.g.
    observe/flags/) each of its modules is."""
    if name in named:
        return True
    return _is_package(name) and all(_covered(c, named) for c in _children(name))


def _exists(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_every_module_is_in_a_layer() -> None:
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    named = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    missing = [m for m in sorted(_children("observe")) if not _covered(m, named)]
    assert not missing, f"add these to a layer in pyproject.toml [tool.importlinter]: {missing}"
    assert all(_exists(m) for m in named), ("the layers name modules that no longer exist", named)


def _core_layers() -> list[set[str]]:
    """The layers below the CLI and the edges, top to bottom: the pure core."""
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    parsed = [{m.strip() for m in layer.replace("|", ":").split(":")} for layer in layers]
    edges = next(i for i, layer in enumerate(parsed) if "observe.pipeline" in layer)
    return parsed[edges + 1 :]


def test_a_new_module_is_named_in_two_lists_at_most() -> None:
    """pyproject.toml names modules one by one in two lists only: the layers, and the no-I/O
    contract (the core). mypy checks all of observe; typer, grafanalib and pandas are forbidden in
    all of observe but their homes (ignore_imports), so a new module needs no line there."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert conf["tool"]["mypy"]["files"] == ["observe"]
    listing = [c["name"] for c in _contracts() if len(c.get("source_modules", [])) > 1]
    assert all(n.startswith("The pure core does no") for n in listing), listing
    homes = {
        c["name"]: c.get("ignore_imports", []) for c in _contracts() if c.get("source_modules") == ["observe"]
    }
    assert len(homes) == 3, homes
    assert all(len(h) <= 4 for h in homes.values()), homes  # the homes, not every other module


def test_the_core_is_ordered_and_does_no_io() -> None:
    """The contract names the core's order (not one joined layer), and every core module is under
    the no-I/O contract (observe.config, the sidecar's settings, once read files from the core)."""
    layers = _core_layers()
    assert len(layers) >= 8, "the core is one joined layer again: name its order in pyproject.toml"
    order = [
        next(i for i, layer in enumerate(layers) if m in layer)
        for m in (
            "observe.diagnosis",
            "observe.advise",
            "observe.capacity",
            "observe.flags.vllmflags",
            "observe.model",
        )
    ]
    assert order == sorted(order) and len(set(order)) == len(order), order
    no_io = next(c for c in _contracts() if c["name"].startswith("The pure core does no"))
    assert set().union(*layers) == set(no_io["source_modules"]), set().union(*layers) ^ set(
        no_io["source_modules"]
    )


def test_no_test_module_imports_another() -> None:
    """What tests share lives in helper modules (services, realvllm, scaninputs, reportdata, the
    *kit modules): a test module imported by another runs its module-level setup twice and hides
    which file a helper belongs to."""
    import ast

    tests = Path(__file__).resolve().parent
    offenders = []
    for path in sorted(tests.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(
                n.split(".")[0] == "tests" and n.split(".")[1:2] and n.split(".")[1].startswith("test_")
                for n in names
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, offenders
