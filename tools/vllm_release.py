"""One vLLM release → observe's release data, from the release's own wheel (no import of vLLM).

    pip download --no-deps vllm==0.34.0 -d /tmp/vllm-0.34
    PYTHONPATH=. python tools/vllm_release.py /tmp/vllm-0.34/vllm-0.34.0-*.whl   # writes all, prints what moved
    PYTHONPATH=. python tools/vllm_release.py --check    # regenerate from tests/data, compare (the tests run it)
    PYTHONPATH=. python tools/vllm_release.py --pypi     # by hand or on a schedule, never in CI: the newest
                                                         # release on PyPI (pip index versions vllm) the data lacks

A wheel gives three extracts under tests/data/ (each records the wheel's sha256):
- vllm-engine-args/vllm-V.json: EngineArgs fields and their defaults (tools/vllm_engine_args.py), plus
  ``facts``: CacheConfig's class constants (DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION), the
  utilization ``resolved_gpu_memory_utilization`` gives with the extensible KV cache, and a digest of
  ``EngineArgs.get_batch_defaults`` (the batch defaults table is carried over only while it is unchanged);
- vllm-metrics/vllm-V.json: every ``vllm:`` metric (tools/vllm_metric_names.py, tuple-defined ones included);
- vllm-logs/vllm-V.json: where each literal observe's log parser keys on (observe.parse.startup /
  failures RULES) occurs in vLLM's source; a literal that vanished or moved file is printed.

Then observe/data/vllm_flags.json (merged: generated entries rebuilt; hand-read entries carried into
the new release while vLLM's extract says their default is unchanged, and the memory defaults re-derived
from ``facts``) and observe/metrics/recent.py (the catalog of metrics names.py lacks) are rewritten.
Whatever changed that this tool cannot carry over is printed under "review".
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
ARGS_DIR, METRICS_DIR, LOGS_DIR = DATA / "vllm-engine-args", DATA / "vllm-metrics", DATA / "vllm-logs"
NAMES_RECENT = ROOT / "observe" / "metrics" / "recent.py"
CACHE_PY = "vllm/config/cache.py"


def _tool(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ARGS, METRICS = _tool("vllm_engine_args"), _tool("vllm_metric_names")


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


# ---------------------------------------------------------------- extracts from one wheel


def facts(z: zipfile.ZipFile) -> dict[str, Any]:
    """CacheConfig's memory constants and how an unset utilization resolves; the batch-defaults digest."""
    out: dict[str, Any] = {}
    tree = ast.parse(z.read(CACHE_PY).decode())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CacheConfig")
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id.isupper():
            try:
                out[st.target.id] = (
                    {"value": ast.literal_eval(st.value), "line": st.lineno} if st.value else None
                )
            except ValueError:
                continue
        if isinstance(st, ast.FunctionDef) and st.name == "resolved_gpu_memory_utilization":
            for node in ast.walk(st):
                if isinstance(node, ast.If) and "extensible" in ast.unparse(node.test):
                    ret = node.body[0]
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Constant):
                        out["extensible_kv_utilization"] = {"value": ret.value.value, "line": ret.lineno}
    src = z.read(ARGS.ARG_UTILS).decode()
    args_tree = ast.parse(src)
    for node in ast.walk(args_tree):
        if isinstance(node, ast.FunctionDef) and node.name == "get_batch_defaults":
            body = ast.unparse(node)
            out["get_batch_defaults_sha256"] = hashlib.sha256(body.encode()).hexdigest()[:16]
    return out


def parser_literals() -> dict[str, str]:
    """rule name → the literal it keys on, for observe's startup and failure parsers (≥ 8 characters:
    shorter ones such as "set " say nothing about a wording)."""
    from observe.parse import failures, startup

    out: dict[str, str] = {}
    for rules in (startup.RULES, failures.RULES):
        for r in rules:
            lit = max(r.literals, key=len)
            if len(lit) >= 8:
                out[r.name] = lit
    return dict(sorted(out.items()))


def log_wordings(sources: dict[str, str]) -> dict[str, list[str]]:
    """rule name → "file:line" of every source line holding its literal (at most 5, sorted)."""
    out: dict[str, list[str]] = {}
    lits = parser_literals()
    for path, text in sorted(sources.items()):
        for no, line in enumerate(text.splitlines(), 1):
            for name, lit in lits.items():
                if lit in line and len(out.setdefault(name, [])) < 5:
                    out[name].append(f"{path}:{no}")
    return {name: out.get(name, []) for name in lits}


def extract(wheel: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    args = ARGS.extract(wheel)
    with zipfile.ZipFile(wheel) as z:
        args["facts"] = facts(z)
        sources = {
            n: z.read(n).decode("utf-8", "replace")
            for n in z.namelist()
            if n.startswith("vllm/") and n.endswith(".py")
        }
    metrics, mentions = METRICS.extract(sources)
    met = {
        "wheel": wheel.name,
        "sha256": digest,
        "made_by": "tools/vllm_metric_names.py",
        "metrics": metrics,
        "mentions": mentions,
    }
    logs = {
        "wheel": wheel.name,
        "sha256": digest,
        "version": args["version"],
        "made_by": "tools/vllm_release.py",
        "wordings": log_wordings(sources),
    }
    return args, met, logs


# ---------------------------------------------------------------- carrying hand-read facts forward


def _extend_source(e: dict[str, Any], prev: str, new: str) -> None:
    src = e.get("source")
    if isinstance(src, str):
        if e["from"] == prev:
            e["source"] = src.replace(f"@ v{prev}", f"@ v{prev}..v{new}", 1)
        else:
            e["source"] = src.replace(f"..v{prev}", f"..v{new}")
    e["to"] = new


def _extend(node: Any, prev: str, new: str, skip: frozenset[str] = frozenset()) -> None:
    """Every range ending at `prev` under `node` now ends at `new` (keys in `skip` left alone)."""
    if isinstance(node, dict):
        if node.get("to") == prev and "from" in node:
            _extend_source(node, prev, new)
        for k, v in node.items():
            if k not in skip:
                _extend(v, prev, new)
    elif isinstance(node, list):
        for v in node:
            _extend(v, prev, new)


def _derived(dest: str, f: dict[str, Any], new: str) -> list[dict[str, Any]] | None:
    """effective_default entries for `new` derived from CacheConfig's facts, where the tool knows how."""
    facts_ = f.get("facts", {})
    at = f"{CACHE_PY} @ v{new}"
    if dest == "gpu_memory_utilization" and "extensible_kv_utilization" in facts_:
        ext, base = facts_["extensible_kv_utilization"], facts_["DEFAULT_GPU_MEMORY_UTILIZATION"]
        return [
            {
                "from": new,
                "to": new,
                "device": "GPU",
                "value": ext["value"],
                "when": "extensible_kv_cache",
                "otherwise": base["value"],
                "note": "unset: 1.0 with the extensible KV cache (on by default on CUDA and ROCm unless "
                "--kv-cache-memory-bytes, --num-gpu-blocks-override or a connector rules it out: "
                "vllm/config/vllm.py _resolve_extensible_kv_cache), else DEFAULT_GPU_MEMORY_UTILIZATION",
                "source": f"{at} line {ext['line']} (resolved_gpu_memory_utilization); "
                f"line {base['line']} (DEFAULT_GPU_MEMORY_UTILIZATION)",
            },
            {
                "from": new,
                "to": new,
                "device": "CPU",
                "value": base["value"],
                "source": f"{at} line {base['line']} (DEFAULT_GPU_MEMORY_UTILIZATION; no extensible KV cache "
                "off CUDA and ROCm)",
            },
        ]
    if dest == "block_size" and "DEFAULT_BLOCK_SIZE" in facts_:
        b = facts_["DEFAULT_BLOCK_SIZE"]
        return [
            {
                "from": new,
                "to": new,
                "device": "GPU",
                "computed": "attention_backend",
                "fallback": b["value"],
                "note": f"the attention backend may raise it (get_preferred_block_size; vLLM logs 'Setting "
                f"kv cache block size to N for X backend(s).'); 'fallback' is CacheConfig.DEFAULT_BLOCK_SIZE = "
                f"{b['value']}",
                "source": f"vllm/platforms/interface.py @ v{new} (update_block_size_for_backend); {at} line "
                f"{b['line']} (DEFAULT_BLOCK_SIZE)",
            }
        ]
    return None


def carry(data: dict[str, Any], rel: dict[str, Any], prev_rel: dict[str, Any] | None) -> list[str]:
    """Add release `rel` (newer than every read release) to the hand-read facts of `data`; → review notes."""
    read = data["_meta"]["versions_read"]
    prev, new = read[-1], rel["version"]
    notes: list[str] = []
    fields = {f["flag"]: f for f in rel["fields"]}
    before = {f["flag"]: f for f in (prev_rel or {"fields": []})["fields"]}
    for flag, entry in data["flags"].items():
        if "read" in entry:
            continue  # generated: rebuilt by merge
        f = fields.get(flag)
        if f is None:
            if (
                flag in before
                and entry.get("removed_in") is None
                and any(e["to"] == prev for e in entry["present"])
            ):
                entry["removed_in"], entry["last"] = new, prev
                notes.append(f"{flag}: gone in {new}")
            continue
        skip: set[str] = set()
        derived = _derived(f["dest"], {**f, "facts": rel.get("facts", {})}, new)
        old = before.get(flag)
        changed = old is not None and (old["default"], old.get("expr")) != (f["default"], f.get("expr"))
        if changed or derived is not None:
            skip |= {"default", "effective_default"}
            entry["default"].append(
                {
                    "from": new,
                    "to": new,
                    "value": f["default"],
                    "source": f"{ARGS.ARG_UTILS} @ v{new} (EngineArgs.{f['dest']})"
                    + (f" = {f['config']}.{f['dest']}" if f["config"] else ""),
                    **({"computed": f["expr"]} if "expr" in f else {}),
                }
            )
            if derived is not None:
                entry.setdefault("effective_default", []).extend(derived)
            elif entry.get("effective_default"):
                notes.append(f"{flag}: default changed in {new}; its effective default needs reading by hand")
        _extend(entry, prev, new, frozenset(skip))
    batch_same = (prev_rel or {}).get("facts", {}).get("get_batch_defaults_sha256") == rel.get(
        "facts", {}
    ).get("get_batch_defaults_sha256")
    for table in ("engines", "v0_batched_tokens", "cpu_backend", "v1_batch_defaults"):
        if table != "v1_batch_defaults" or batch_same:
            _extend(data[table], prev, new)
        else:
            notes.append(
                f"EngineArgs.get_batch_defaults changed in {new}: v1_batch_defaults needs reading by hand"
            )
    read.append(new)
    return notes


# ---------------------------------------------------------------- the committed data, rebuilt


def _releases(folder: Path) -> list[Path]:
    return sorted(folder.glob("vllm-*.json"), key=lambda p: _vkey(p.stem))


def build(data: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(vllm_flags.json, names_recent.py, review notes) from the committed extracts."""
    rels = [json.loads(p.read_text()) for p in _releases(ARGS_DIR)]
    notes: list[str] = []
    data = json.loads(json.dumps(data))
    by_version = {r["version"]: r for r in rels}
    for r in rels:
        read = data["_meta"]["versions_read"]
        if _vkey(r["version"]) > _vkey(read[-1]):
            notes += carry(data, r, by_version.get(read[-1]))
    flags = ARGS.render(ARGS.merge(rels, data))
    return flags, METRICS.catalog(_releases(METRICS_DIR)), notes


def moved_wordings() -> list[str]:
    """Parser literals that vanished from, or changed file in, each release against the one before."""
    out: list[str] = []
    rels = [json.loads(p.read_text()) for p in _releases(LOGS_DIR)]
    for a, b in zip(rels, rels[1:]):
        for name, where in b["wordings"].items():
            was = a["wordings"].get(name, [])
            files_a, files_b = {w.split(":")[0] for w in was}, {w.split(":")[0] for w in where}
            if was and not where:
                out.append(f"{b['version']}: parser rule {name}: its wording is gone from vLLM's source")
            elif files_a != files_b and was:
                out.append(
                    f"{b['version']}: parser rule {name}: moved {sorted(files_a)} -> {sorted(files_b)}"
                )
    return out


def newest_on_pypi() -> str | None:
    """The newest vLLM release `pip index versions vllm` lists (network; never called by tests)."""
    got = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "vllm"],
        capture_output=True,
        text=True,
        check=False,
    )
    m = re.search(r"vllm \(([^)]+)\)", got.stdout)
    return m.group(1) if m else None


def main(argv: list[str]) -> int:
    flags_path = ARGS.FLAGS_JSON
    if argv == ["--pypi"]:
        newest = newest_on_pypi()
        if newest is None:
            print("pip index versions vllm gave no answer", file=sys.stderr)
            return 2
        read = json.loads(flags_path.read_text())["_meta"]["versions_read"]
        if _vkey(newest) > _vkey(read[-1]):
            print(
                f"vLLM {newest} is on PyPI; observe's data stops at {read[-1]}: run tools/vllm_release.py on its wheel"
            )
            return 1
        print(f"observe's data covers the newest vLLM on PyPI ({newest})")
        return 0
    if argv == ["--check"]:
        flags, names, _ = build(json.loads(flags_path.read_text()))
        bad = [p for p, t in ((flags_path, flags), (NAMES_RECENT, names)) if p.read_text() != t]
        for p in bad:
            print(
                f"{p.relative_to(ROOT)} drifted: run tools/vllm_release.py on the newest wheel",
                file=sys.stderr,
            )
        return 1 if bad else 0
    if len(argv) != 1 or not argv[0].endswith(".whl") or not Path(argv[0]).is_file():
        print("usage: vllm_release.py WHEEL | --check | --pypi", file=sys.stderr)
        return 2
    args, met, logs = extract(Path(argv[0]))
    version = args["version"]
    for folder, obj in ((ARGS_DIR, args), (METRICS_DIR, met), (LOGS_DIR, logs)):
        folder.mkdir(exist_ok=True)
        (folder / f"vllm-{version}.json").write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n")
    flags, names, notes = build(json.loads(flags_path.read_text()))
    flags_path.write_text(flags)
    NAMES_RECENT.write_text(names)
    for line in moved_wordings() + [f"review: {n}" for n in notes]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
