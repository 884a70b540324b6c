"""Every `vllm:` metric a vLLM release defines, read from its wheel's source (no import of vLLM).

    pip download --no-deps vllm==0.33.0 -d /tmp/vllm-0.33
    python tools/vllm_metric_names.py /tmp/vllm-0.33/vllm-0.33.0-*.whl > tests/data/vllm-metrics/vllm-0.33.0.json
    PYTHONPATH=. python tools/vllm_metric_names.py --catalog tests/data/vllm-metrics/vllm-*.json > observe/metrics/recent.py

A metric is a `vllm:` string that names one in the source: the `name=` of a call (prometheus_client's
Gauge/Counter/Histogram/Info, vLLM's `_gauge_cls` and the like; the type comes from the callee's name)
or the key of a dict whose value is such a definition (`OffloadingCounterMetadata(...)`), directly or
through a constant (`_TransferMetricName.LOAD_BYTES`, `_vllm_metric_name(X)`). `vllm:` strings found
elsewhere (docstrings, benchmarks that grep /metrics) are listed apart, as `mentions`. Counters are
given with their `_total` suffix, as they appear on the wire.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path

TYPES = (("histogram", "histogram"), ("counter", "counter"), ("gauge", "gauge"), ("info", "info"))
NAME = re.compile(r"^vllm:[a-z0-9_]+$")


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _type(call: ast.Call) -> str | None:
    name = _callee(call).lower()
    return next((t for key, t in TYPES if key in name), None)


def _doc(call: ast.Call) -> str:
    for kw in call.keywords:
        if kw.arg in ("documentation", "description", "help") and isinstance(kw.value, ast.Constant):
            return " ".join(str(kw.value.value).split())
    return ""


def _consts(tree: ast.Module) -> tuple[dict[str, str], dict[str, str]]:
    """(names assigned a string anywhere in the file, Class.NAME -> string)."""
    plain: dict[str, str] = {}
    qualified: dict[str, str] = {}
    for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        for sub in cls.body:
            if (
                isinstance(sub, ast.Assign)
                and isinstance(sub.value, ast.Constant)
                and isinstance(sub.value.value, str)
            ):
                for tg in sub.targets:
                    if isinstance(tg, ast.Name):
                        qualified[f"{cls.name}.{tg.id}"] = sub.value.value
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for tg in node.targets:
                if isinstance(tg, ast.Name):
                    plain[tg.id] = node.value.value
    return plain, qualified


class _Resolver:
    def __init__(self, plain: dict[str, str], qualified: dict[str, str]) -> None:
        self.plain, self.qualified = plain, qualified

    def __call__(self, e: ast.expr) -> str | None:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return e.value
        if isinstance(e, ast.Name):
            return self.plain.get(e.id)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            return self.qualified.get(f"{e.value.id}.{e.attr}")
        if isinstance(e, ast.Call) and len(e.args) == 1 and _callee(e).endswith("metric_name"):
            inner = self(e.args[0])
            return None if inner is None else inner if inner.startswith("vllm:") else "vllm:" + inner
        return None


def _definitions(tree: ast.Module, resolve: _Resolver):
    """(name, defining call) pairs of one file."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "name":
                    yield resolve(kw.value), node
            if node.args and _type(node) is not None:
                yield resolve(node.args[0]), node
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if k is not None and isinstance(v, ast.Call):
                    yield resolve(k), v
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for tg in node.targets:
                if isinstance(tg, ast.Subscript):
                    yield resolve(tg.slice), node.value


def _tuple_definitions(tree: ast.Module):
    """(name, defining call, help) of metrics whose names sit in a list or tuple of tuples that a loop
    (``for name, doc in specs`` or a comprehension) passes to a metric call as ``name=name``: 0.33's
    ``vllm:diffusion_*`` counters (vllm/v1/spec_decode/metrics.py)."""
    tables: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
            for tg in node.targets:
                if isinstance(tg, ast.Name):
                    tables.setdefault(tg.id, []).extend(node.value.elts)
    loops: list[tuple[ast.expr, ast.expr, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For):
            loops.append((node.target, node.iter, node))
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            loops.extend((g.target, g.iter, node) for g in node.generators)
    for target, it, scope in loops:
        if not (isinstance(target, ast.Tuple) and isinstance(it, ast.Name) and it.id in tables):
            continue
        slots = {e.id: i for i, e in enumerate(target.elts) if isinstance(e, ast.Name)}
        for call in (c for c in ast.walk(scope) if isinstance(c, ast.Call) and _type(c) is not None):
            for kw in call.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Name) and kw.value.id in slots:
                    i = slots[kw.value.id]
                    for row in tables[it.id]:
                        if isinstance(row, ast.Tuple) and len(row.elts) > i:
                            name, doc = row.elts[i], row.elts[i + 1] if len(row.elts) > i + 1 else None
                            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                                help_ = doc.value if isinstance(doc, ast.Constant) else ""
                                yield name.value, call, " ".join(str(help_).split())


def extract(sources: dict[str, str]) -> tuple[list[dict], list[str]]:
    found: dict[str, dict] = {}
    mentioned: set[str] = set()
    trees: dict[str, ast.Module] = {}
    qualified: dict[str, str] = {}
    plains: dict[str, dict[str, str]] = {}
    for path, text in sorted(sources.items()):
        mentioned.update(m for m in re.findall(r"\bvllm:[a-z][a-z0-9_]*[a-z0-9]", text) if NAME.match(m))
        try:
            trees[path] = ast.parse(text)
        except SyntaxError:
            continue
        plains[path], q = _consts(trees[path])
        qualified.update(q)
    for path, tree in trees.items():
        for name, call in _definitions(tree, _Resolver(plains[path], qualified)):
            if not name or not NAME.match(name) or (t := _type(call)) is None:
                continue
            wire = name + "_total" if t == "counter" and not name.endswith("_total") else name
            doc = _doc(call)
            if not doc and len(call.args) > 1 and isinstance(call.args[1], ast.Constant):
                doc = " ".join(str(call.args[1].value).split())
            found.setdefault(wire, {"name": wire, "type": t, "help": doc, "file": path, "line": call.lineno})
        for name, call, doc in _tuple_definitions(tree):
            if NAME.match(name) and (t := _type(call)) is not None:
                wire = name + "_total" if t == "counter" and not name.endswith("_total") else name
                found.setdefault(
                    wire, {"name": wire, "type": t, "help": doc, "file": path, "line": call.lineno}
                )
    defined = {m["name"] for m in found.values()} | {m["name"].removesuffix("_total") for m in found.values()}
    return sorted(found.values(), key=lambda m: m["name"]), sorted(mentioned - defined)


_UNITS = (
    ("_seconds", "seconds"),
    ("_bytes", "bytes"),
    ("_perc", "ratio"),
    ("_info", "info"),
    ("_time", "seconds"),
)

_HEADER = '''"""vLLM metric families the hand-written catalog (observe/metrics/names.py) does not have: those added since
0.30 (KV offload and tiering, KV connectors: NIXL, Mooncake, LMCache, HF3FS, UMBP; P/D
disaggregation; sleep mode, RL weight updates, websockets, ...), as read from the wheels' source by
tools/vllm_metric_names.py (tests/data/vllm-metrics/). Data only: observe.metrics.names builds catalog
entries from these rows. Generated — do not edit; regenerate after adding a release's JSON:

    PYTHONPATH=. python tools/vllm_metric_names.py --catalog tests/data/vllm-metrics/vllm-*.json > observe/metrics/recent.py

Row: (exposed name, type, unit, help as in vLLM's source, since, until). The unit comes from the
name's Prometheus suffix (_seconds, _bytes, _perc -> ratio), "" when it has none.
"""

from __future__ import annotations

# fmt: off
ROWS: tuple[tuple[str, str, str, str, str, str | None], ...] = (
'''


def catalog(files: list[Path]) -> str:
    """observe/metrics/recent.py: a row per metric of the release files (oldest first) not in names.py."""
    from observe.metrics import names

    releases = [
        (json.loads(f.read_text())["wheel"].split("-")[1], json.loads(f.read_text())["metrics"])
        for f in files
    ]
    releases.sort(key=lambda r: tuple(int(x) for x in r[0].split(".")))
    first_seen: dict[str, str] = {}
    last_seen: dict[str, str] = {}
    rows: dict[str, dict] = {}
    for version, metrics in releases:
        for m in metrics:
            first_seen.setdefault(m["name"], version)
            last_seen[m["name"]] = version
            rows[m["name"]] = m
    newest = releases[-1][0]
    out = [_HEADER]
    for name in sorted(rows):
        if name in names.HAND_WRITTEN:
            continue
        m = rows[name]
        base = name.removesuffix("_total")
        unit = next((u for suf, u in _UNITS if base.endswith(suf)), "")
        since = f"vllm {first_seen[name]}" + (
            " (older wheels not read)" if first_seen[name] == releases[0][0] else ""
        )
        until = None if last_seen[name] == newest else f"after vllm {last_seen[name]}"
        help_ = m["help"] or f"(no help text in vLLM's source; defined in {m['file']})"
        out.append(f"    {(name, m['type'], unit, help_, since, until)!r},\n")
    out.append(")\n# fmt: on\n")
    return "".join(out)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--catalog":
        sys.stdout.write(catalog([Path(a) for a in argv[1:]]))
        return 0
    if len(argv) != 1 or not argv[0].endswith(".whl"):
        print("usage: vllm_metric_names.py WHEEL", file=sys.stderr)
        return 2
    wheel = Path(argv[0])
    with zipfile.ZipFile(wheel) as z:
        sources = {
            n: z.read(n).decode("utf-8", "replace")
            for n in z.namelist()
            if n.startswith("vllm/") and n.endswith(".py")
        }
    metrics, mentions = extract(sources)
    out = {
        "wheel": wheel.name,
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "made_by": "tools/vllm_metric_names.py",
        "metrics": metrics,
        "mentions": mentions,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
