"""Rooms by job (issue 34): move observe's top-floor modules into packages by what they do — the
sidecar, the failure vocabulary, metrics, the monitoring artefacts, `observe top` — so that the
top floor reads as the architecture. A deterministic codemod, run once on a clean checkout:

    python3 tools/move_modules.py            # git mv the files, rewrite every mention, regenerate
    python3 tools/move_modules.py --dry-run  # print the mapping and the files it would rewrite

It `git mv`s each module of MOVES (a package: its folder), writes each new package's __init__.py
(a docstring only: loading one module of a package loads nothing else of it), then rewrites, in
observe/, tests/, tools/, bench/, docs/, the top-level *.md and pyproject.toml:

- `from observe import sidecar` → `from observe.sidecar import service as sidecar` (the name the
  code uses is kept, so the code below the import does not change);
- every dotted mention `observe.<old>` (imports, `-m observe.x`, monkeypatch and mock targets,
  contract lists) → `observe.<new>`, longest name first, in one pass;
- every path `observe/<old>.py` (and `"observe" / "<old>.py"`) → the new path;
- pyproject.toml's import-linter lists: a new package whose modules all sit in one layer is named
  whole there (and so in the no-I/O contract), a module whose package is named beside it is dropped;

then sorts the imports (`ruff check --fix --select I`), formats (`ruff format`), and regenerates
docs/architecture.md (tools/regen_architecture.py), docs/findings.md, and the alerts, dashboards and
Kubernetes manifests (`observe generate …`: they name their generator's file). PROSE holds the few
sentences that name the old top floor without a dotted name; one not found is said, left to you. The public names inside
the modules are kept, and so is the command line (`python -m observe …`). It refuses to run twice
(an old module missing) or over uncommitted changes.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# old module (or package) → new; every new package is one of PACKAGES
MOVES: dict[str, str] = {
    # the live sidecar: what follows one vLLM (or a node's pods), serves its /metrics and findings
    "observe.sidecar": "observe.sidecar.service",
    "observe.exporter": "observe.sidecar.exporter",
    "observe.liveinstance": "observe.sidecar.instance",
    "observe.livelaunch": "observe.sidecar.launch",
    "observe.sidecarconfig": "observe.sidecar.config",
    "observe.tokenfile": "observe.sidecar.tokenfile",
    "observe.kubeapi": "observe.sidecar.kubeapi",
    "observe.podlogs": "observe.sidecar.podlogs",
    "observe.tail": "observe.sidecar.tail",
    "observe.tailstate": "observe.sidecar.tailstate",
    "observe.tailwake": "observe.sidecar.tailwake",
    # the failure vocabulary: the kinds, crash words, the detectors of a dead or wedged engine
    "observe.failurekinds": "observe.failures.kinds",
    "observe.crashes": "observe.failures.crashes",
    "observe.failing": "observe.failures.failing",
    "observe.stuck": "observe.failures.stuck",
    "observe.shutdown": "observe.failures.shutdown",
    # vLLM's metrics: the catalog of names, PromQL, the arithmetic, reading /metrics and Prometheus
    "observe.names": "observe.metrics.names",
    "observe.names_catalog": "observe.metrics.catalog",
    "observe.names_histograms": "observe.metrics.histograms",
    "observe.names_recent": "observe.metrics.recent",
    "observe.promql": "observe.metrics.promql",
    "observe.metricmath": "observe.metrics.metricmath",
    "observe.progress": "observe.metrics.progress",
    "observe.recentview": "observe.metrics.recentview",
    "observe.scrape": "observe.metrics.scrape",
    "observe.promhistory": "observe.metrics.promhistory",
    # the monitoring artefacts: alerts, recording rules, dashboards, the Kubernetes manifests
    "observe.alerts": "observe.monitoring.alerts",
    "observe.alertopts": "observe.monitoring.alertopts",
    "observe.recording_rules": "observe.monitoring.recording_rules",
    "observe.dashboards": "observe.monitoring.dashboards",
    "observe.dashjson": "observe.monitoring.dashjson",
    "observe.kubernetes": "observe.monitoring.kubernetes",
    # log files before the grammar: CRI records, rotated parts, the long-line bound (the parse layer)
    "observe.cri": "observe.parse.cri",
    "observe.rotation": "observe.parse.rotation",
    "observe.linebound": "observe.parse.linebound",
    # `observe top`
    "observe.top": "observe.top.view",
    "observe.topstate": "observe.top.state",
}

PACKAGES: dict[str, str] = {
    "observe.sidecar": "The live sidecar: it follows one vLLM's logs (or a node's pods' logs), scrapes its /metrics, "
    "and serves its own /metrics, /healthz and /api/diagnosis — `service` composes it, `instance` is one vLLM "
    "as it sees it, `launch` that vLLM's launch state, `config` its settings, `tail*` the log follower, "
    "`exporter` what it serves, `kubeapi`/`podlogs`/`tokenfile` where it reads from.",
    "observe.failures": "The failure vocabulary: every failure kind (`kinds`), which engine errors are a crash "
    "(`crashes`), shutdown noise (`shutdown`), and the detectors of an engine that died (`failing`) or "
    "wedged (`stuck`).",
    "observe.metrics": "vLLM's metrics: the catalog of every name vLLM exposed (`names`, `catalog`, `histograms`, "
    "`recent`), PromQL's shared meanings (`promql`), the arithmetic on samples (`metricmath`, `progress`, "
    "`recentview`), and reading them (`scrape` /metrics, `promhistory` a Prometheus).",
    "observe.monitoring": "The monitoring artefacts generated from one Settings object: the alerting rules "
    "(`alerts`, `alertopts`), the recording rules, the Grafana dashboards (`dashboards`, `dashjson`) and the "
    "Kubernetes manifests (`kubernetes`).",
    "observe.top": "`observe top`: the live terminal view (`view`) over what it shows of each server (`state`).",
}

# sentences that name the old top floor in prose (no dotted name to rewrite): replaced whole when found
PROSE: dict[str, str] = {
    "| `observe/` | the package: `parse` (the log grammar), `timeline`, `rules` (the findings), `advise`, "
    "`capacity` (pure core); `pipeline`, `tail`, `scrape`, `exporter`, `sidecar`, `manage` (edges); `report*`, "
    "`dashboards`, `alerts`; `cli` (typer, only there) |": "| `observe/` | the package: `parse` (the log grammar), "
    "`timeline`, `rules` (the findings), `advise`, `capacity`, `failures` (the failure vocabulary), `metrics` (the "
    "metric catalog, PromQL, reading /metrics) (pure core, but for the readers); `pipeline`, `sidecar`, `manage`, "
    "`tune`, `top` (edges); `report`, `monitoring` (alerts, recording rules, dashboards, Kubernetes); `commands`; "
    "`cli` (typer, only there) |",
    # tests/test_names.py: names.py imports its two catalog parts and nothing else
    """        if isinstance(n, ast.ImportFrom) and n.module == "observe"
        for a in n.names
    ] == ["names_histograms", "names_recent"]
    root = Path(names.__file__).parent
    for leaf, allowed in (("names_recent", {"__future__"}), ("names_catalog", {"__future__", "dataclasses"})):""": """        if isinstance(n, ast.ImportFrom) and n.module == "observe.metrics"
        for a in n.names
    ] == ["histograms", "recent"]
    root = Path(names.__file__).parent
    for leaf, allowed in (("recent", {"__future__"}), ("catalog", {"__future__", "dataclasses"})):""",
}

TEXT_GLOBS = (
    "observe/**/*.py",
    "tests/**/*.py",
    "tools/**/*.py",
    "bench/**/*.py",
    "docs/**/*.md",
    "*.md",
    "examples/**/*.md",
    "deploy/**/*.md",
    "compose/**/*.md",
    "tests/data/PROVENANCE.md",
)
SKIP = (
    "tests/data/",
    "tools/move_modules.py",
    "tests/test_move_modules.py",
)  # its own mapping stays as written


def _path(root: Path, module: str) -> Path:
    """A module's file, or a package's folder."""
    base = root.joinpath(*module.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def _new_path(root: Path, old: str, new: str) -> Path:
    base = root.joinpath(*new.split("."))
    return base if _path(root, old).is_dir() else base.with_suffix(".py")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


# ------------------------------------------------------------------ rewriting text


def _dotted_re(moves: dict[str, str]) -> re.Pattern[str]:
    names = sorted(moves, key=len, reverse=True)
    return re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?!\w)")


def _path_re(moves: dict[str, str]) -> re.Pattern[str]:
    names = sorted((m.replace(".", "/") for m in moves), key=len, reverse=True)
    return re.compile(r"(?<![\w/.])(" + "|".join(re.escape(n) for n in names) + r")(\.py\b|/)")


def rewrite_from_imports(text: str, moves: dict[str, str]) -> str:
    """`from observe[.pkg] import name [as alias]` where `observe.pkg.name` moved → an import of its
    new place under the name the code uses."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        moved = [a for a in node.names if f"{node.module}.{a.name}" in moves]
        if not moved:
            continue
        indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
        kept = [a for a in node.names if a not in moved]
        out = []
        if kept:
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in kept)
            out.append(f"{indent}from {node.module} import {names}")
        for a in moved:
            parent, _, base = moves[f"{node.module}.{a.name}"].rpartition(".")
            alias = a.asname or a.name
            out.append(f"{indent}from {parent} import {base}" + ("" if alias == base else f" as {alias}"))
        edits.append((node.lineno, node.end_lineno or node.lineno, "\n".join(out) + "\n"))
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1 : end] = [new]
    return "".join(lines)


def rewrite_text(
    text: str, moves: dict[str, str], *, python: bool, prose: dict[str, str] | None = None
) -> str:
    """Every mention of a moved module in `text` at its new place (in one pass: a new name is
    never rewritten again)."""
    for old, new in (prose or {}).items():
        text = text.replace(old, new)
    text = _dotted_re(moves).sub(lambda m: moves[m.group(1)], text)
    paths = {o.replace(".", "/"): n.replace(".", "/") for o, n in moves.items()}
    text = _path_re(moves).sub(lambda m: paths[m.group(1)] + m.group(2), text)

    def quoted(m: re.Match[str]) -> str:  # "observe" / "tee.py" → "observe" / "pkg" / "mod.py"
        old = "observe." + m.group(1)
        if old not in moves:
            return m.group(0)
        parts = moves[old].split(".")
        return " / ".join(f'"{p}"' for p in parts[:-1]) + f' / "{parts[-1]}{m.group(2)}"'

    text = re.sub(r'"observe" / "(\w+)(\.py)"', quoted, text)
    return rewrite_from_imports(text, moves) if python else text  # `from observe import x`: no dotted name


# ------------------------------------------------------------------ pyproject's lists


def _modules_of(root: Path, package: str) -> set[str]:
    pkg = root.joinpath(*package.split("."))
    out = set()
    for p in pkg.glob("*.py"):
        if p.stem != "__init__":
            out.add(f"{package}.{p.stem}")
    for p in pkg.iterdir():
        if p.is_dir() and (p / "__init__.py").exists():
            out.add(f"{package}.{p.name}")
    return out


def _tidy(names: list[str], whole: set[str]) -> list[str]:
    """Name each package of `whole` once instead of its modules; drop a module whose package is named."""
    out: list[str] = []
    for n in names:
        pkg = next((p for p in whole if n == p or n.startswith(p + ".")), None)
        n = pkg or n
        if n not in out:
            out.append(n)
    return [n for n in out if not any(n.startswith(o + ".") for o in out)]


def tidy_pyproject(text: str, root: Path, packages: list[str]) -> str:
    """A new package named whole in the layers where all its modules sit in one layer, and so in
    the contracts' lists; a module whose package is named beside it dropped."""
    layer_lines = re.findall(r'^  "(observe[^"]*)",?$', text, re.M)
    whole = set()
    for pkg in packages:
        mods = _modules_of(root, pkg)
        for line in layer_lines:
            if mods <= {m.strip() for m in line.split(":")}:
                whole.add(pkg)

    def layer(m: re.Match[str]) -> str:
        names = _tidy([x.strip() for x in m.group(1).split(":")], whole)
        return f'  "{" : ".join(names)}"' + m.group(2)

    text = re.sub(r'^  "(observe[^"]*)"(,?)$', layer, text, flags=re.M)

    def listing(m: re.Match[str]) -> str:
        names = _tidy(re.findall(r'"([^"]+)"', m.group(2)), whole)
        return m.group(1) + "[" + ", ".join(f'"{n}"' for n in names) + "]"

    return re.sub(r"^(source_modules = )\[([^\]]*)\]", listing, text, flags=re.M)


# ------------------------------------------------------------------ the run


def text_files(root: Path) -> list[Path]:
    found = {p for g in TEXT_GLOBS for p in root.glob(g) if p.is_file()}
    tracked = set(_git(root, "ls-files").splitlines())
    rel = {p: p.relative_to(root).as_posix() for p in found}
    return sorted(
        p for p in found if rel[p] in tracked and (rel[p] in TEXT_GLOBS or not rel[p].startswith(SKIP))
    )


def check(root: Path, moves: dict[str, str], packages: dict[str, str]) -> None:
    """Refuse, saying every reason at once: uncommitted changes, a module not there (moved already,
    or renamed since: edit MOVES), a new place taken, a new package's name taken by a module."""
    why = []
    if _git(root, "status", "--porcelain", "--untracked-files=no").strip():
        why.append("commit or stash your changes first")
    for old, new in moves.items():
        if not _path(root, old).exists():
            why.append(f"{old} is not there (moved already, or renamed: edit MOVES)")
        elif _new_path(root, old, new).exists():
            why.append(f"{new} is there already")
    for pkg in packages:
        mod = _path(root, pkg)
        if mod.exists() and pkg not in moves:
            why.append(f"{mod.relative_to(root)} takes the new package's name {pkg}")
    if why:
        raise SystemExit("move_modules: " + "; ".join(why))


def move(root: Path, moves: dict[str, str], packages: dict[str, str]) -> None:
    pairs = [(_path(root, old), _new_path(root, old, new)) for old, new in sorted(moves.items())]
    # a module whose name becomes a new package's (observe/sidecar.py): out of the way first
    for i, (src, dst) in enumerate(pairs):
        if (
            src.suffix == ".py"
            and src.with_suffix("").relative_to(root).as_posix().replace("/", ".") in packages
        ):
            _git(root, "mv", str(src), str(src.with_suffix(".moving")))
            pairs[i] = (src.with_suffix(".moving"), dst)
    for pkg, doc in packages.items():
        folder = root.joinpath(*pkg.split("."))
        folder.mkdir(parents=True, exist_ok=True)
        lines = _wrap(doc, 100)
        (folder / "__init__.py").write_text('"""' + "\n".join(lines) + '"""\n', encoding="utf-8")
        _git(root, "add", str(folder / "__init__.py"))
    for src, dst in pairs:
        dst.parent.mkdir(parents=True, exist_ok=True)
        _git(root, "mv", str(src), str(dst))


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width - (3 if not lines else 0):
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]


def rewrite(root: Path, moves: dict[str, str], packages: dict[str, str], prose: dict[str, str]) -> list[Path]:
    changed = []
    unseen = set(prose)
    for path in text_files(root):
        old = path.read_text(encoding="utf-8")
        unseen -= {k for k in unseen if k in old}
        new = rewrite_text(old, moves, python=path.suffix == ".py", prose=prose)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    for k in sorted(unseen):  # edited since: the lead rewrites that sentence by hand
        print(f"move_modules: prose not found, left to you: {k.splitlines()[0][:90]}…")
    conf = root / "pyproject.toml"
    old = conf.read_text(encoding="utf-8")
    new = tidy_pyproject(rewrite_text(old, moves, python=False), root, sorted(packages))
    if new != old:
        conf.write_text(new, encoding="utf-8")
        changed.append(conf)
    return changed


def finish(root: Path) -> None:
    py = sys.executable
    env = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run(
        [py, "-m", "ruff", "check", "--fix", "--select", "I", "--quiet", "."], cwd=root, check=False
    )
    subprocess.run([py, "-m", "ruff", "format", "--quiet", "."], cwd=root, check=True)
    for tool in ("tools/regen_architecture.py", "tools/regen_findings_doc.py"):
        if (root / tool).exists():
            subprocess.run([py, tool], cwd=root, check=True, env=env)
    for what in ("alerts", "dashboards", "kubernetes"):  # the generated files name their generator's path
        subprocess.run(
            [py, "-m", "observe", "generate", what], cwd=root, check=True, env=env, capture_output=True
        )


def main(
    argv: list[str],
    root: Path = ROOT,
    moves: dict[str, str] = MOVES,
    packages: dict[str, str] = PACKAGES,
    prose: dict[str, str] = PROSE,
) -> int:
    if "--dry-run" in argv:
        for old, new in moves.items():
            print(f"{old} → {new}")
        print(f"{len(moves)} moves into {len(packages)} packages; files that mention them:")
        pat, paths = _dotted_re(moves), _path_re(moves)
        for p in text_files(root):
            text = p.read_text(encoding="utf-8")
            if pat.search(text) or paths.search(text):
                print("  " + p.relative_to(root).as_posix())
        return 0
    check(root, moves, packages)
    move(root, moves, packages)
    changed = rewrite(root, moves, packages, prose)
    if "--no-finish" not in argv:
        finish(root)
    print(f"moved {len(moves)} modules into {len(packages)} packages; rewrote {len(changed)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
