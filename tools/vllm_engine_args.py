"""vLLM's engine flags that matter to tuning, read from each release's wheel (no import of vLLM).

    pip download --no-deps vllm==0.33.0 -d /tmp/vllm-0.33
    python tools/vllm_engine_args.py /tmp/vllm-0.33/vllm-0.33.0-*.whl > tests/data/vllm-engine-args/vllm-0.33.0.json
    python tools/vllm_engine_args.py --merge tests/data/vllm-engine-args/vllm-*.json   # rewrites observe/data/vllm_flags.json
    python tools/vllm_engine_args.py --check tests/data/vllm-engine-args/vllm-*.json   # what the test runs

Step 1 (a wheel → one release's JSON): the fields of ``EngineArgs`` (``vllm/engine/arg_utils.py``),
each with the config class its default comes from (``x: int = SchedulerConfig.x`` or
``get_field(SchedulerConfig, "x")``), that default as the config class declares it (a literal, or
null with ``expr`` when it is computed: a ``field(default_factory=…)``, a call, a name), and its
type as annotated. The flag is ``--`` + the field name with ``-`` for ``_`` (what ``add_cli_args``
gives every field). Every field is kept; ``category`` says which tuning areas it belongs to
(``CATEGORIES``, from the config class and the name), empty for the rest.

Step 2 (releases' JSONs → ``observe/data/vllm_flags.json``): every field with a category becomes a
flag entry of the hand-read table's shape (``present``, ``default``, ``introduced``, ``removed_in``)
over the releases extracted; the hand-read entries (history back to 0.1.7, effective defaults) are
kept as they are and only get their ``category``. A generated entry carries ``read``: the releases
it was read in, so ``observe.flags.vllmflags`` answers "unknown" for releases outside them (a flag first
seen in the oldest extracted release may be older). The next release takes one download and two
commands.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FLAGS_JSON = ROOT / "observe" / "data" / "vllm_flags.json"
ARG_UTILS = "vllm/engine/arg_utils.py"
CONFIG_DIR = "vllm/config/"

# config class → the tuning areas all its fields belong to
_CLASS_CATEGORIES: dict[str, tuple[str, ...]] = {
    "CacheConfig": ("memory",),
    "SchedulerConfig": ("scheduling",),
    "CompilationConfig": ("cuda_graphs",),
    "KVTransferConfig": ("kv_offload",),
    "KVEventsConfig": ("kv_offload",),
    "OffloadConfig": ("kv_offload",),
    "SpeculativeConfig": ("batching",),
}
# a field's name → more areas (first match of each pattern counts)
_NAME_CATEGORIES: tuple[tuple[str, str], ...] = (
    (r"prefix_caching|prefix_cach|hash_algo", "prefix_caching"),
    (r"cudagraph|cuda_graph|enforce_eager|compilation_config", "cuda_graphs"),
    (r"kv_offload|kv_transfer|kv_connector|kv_events|offload_backend|kv_load", "kv_offload"),
    (
        r"max_num_seqs|max_num_batched|batch|max_num_active|partial_prefill|chunked_prefill|long_prefill",
        "batching",
    ),
    (r"schedul|preemption|prefill_schedule|async_scheduling|stream_interval|max_num_queued", "scheduling"),
    (r"performance_mode|speculative", "batching"),
    (
        r"memory|gpu_blocks|block_size|swap_space|cpu_offload|kv_cache|max_model_len|^dtype$|quantization"
        r"|tensor_parallel_size|pipeline_parallel_size|data_parallel_size$|max_logprobs|mamba_cache",
        "memory",
    ),
)
CATEGORIES = ("memory", "batching", "scheduling", "cuda_graphs", "kv_offload", "prefix_caching", "startup")
# a field's name → startup (how weights are read before serving), whatever its config class
_STARTUP = r"checkpoint_prepare|safetensors"


# config classes whose fields change none of the areas whatever their names say (metrics, weight loading)
_NO_CATEGORY = frozenset({"ObservabilityConfig", "LoadConfig", "LoRAConfig"})


def categories(cls: str | None, name: str) -> list[str]:
    """The tuning areas of one EngineArgs field, in CATEGORIES order."""
    if cls in _NO_CATEGORY:
        return ["startup"] if re.search(_STARTUP, name) else []
    got = set(_CLASS_CATEGORIES.get(cls or "", ()))
    for pattern, cat in _NAME_CATEGORIES:
        if re.search(pattern, name):
            got.add(cat)
    if re.search(_STARTUP, name):
        got.add("startup")
    return [c for c in CATEGORIES if c in got]


def _literal(node: ast.expr | None) -> tuple[bool, Any]:
    if node is None:
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _class_defaults(tree: ast.Module) -> dict[str, dict[str, ast.expr | None]]:
    out: dict[str, dict[str, ast.expr | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            fields: dict[str, ast.expr | None] = {}
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    fields[st.target.id] = st.value
            out[node.name] = fields
    return out


def _field_default(value: ast.expr | None) -> ast.expr | None:
    """``field(default=X)`` / pydantic ``Field(default=X, …)`` → X; anything else unchanged."""
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) in (
        "field",
        "Field",
    ):
        for kw in value.keywords:
            if kw.arg == "default":
                return kw.value
    return value


def _source(value: ast.expr | None) -> tuple[str | None, str | None]:
    """(config class, its field) an EngineArgs default refers to, if it does."""
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return value.value.id, value.attr
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "get_field" and len(value.args) == 2:
        cls, name = value.args
        if isinstance(cls, ast.Name) and isinstance(name, ast.Constant) and isinstance(name.value, str):
            return cls.id, name.value
    return None, None


def extract(wheel: Path) -> dict[str, Any]:
    """One wheel → {wheel, sha256, version, made_by, fields: [...]}."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        arg_src = z.read(ARG_UTILS).decode()
        configs: dict[str, dict[str, ast.expr | None]] = {}
        for n in sorted(names):
            if n.startswith(CONFIG_DIR) and n.endswith(".py"):
                configs.update(_class_defaults(ast.parse(z.read(n).decode())))
        version = next(
            (m.group(1) for n in names if (m := re.match(r"vllm-([^/]+)\.dist-info/METADATA$", n))), None
        )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    tree = ast.parse(arg_src)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EngineArgs")
    fields = []
    for st in cls.body:
        if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
            continue
        name = st.target.id
        value = _field_default(st.value)
        src_cls, src_field = _source(value)
        expr_node = value
        if src_cls is not None and src_field is not None and src_cls in configs:
            expr_node = _field_default(configs[src_cls].get(src_field))
        ok, default = _literal(expr_node)
        entry: dict[str, Any] = {
            "flag": "--" + name.replace("_", "-"),
            "dest": name,
            "type": ast.unparse(st.annotation),
            "config": src_cls,
            "default": default if ok else None,
            "line": st.lineno,
            "category": categories(src_cls, name),
        }
        if not ok and expr_node is not None:
            entry["expr"] = ast.unparse(expr_node)[:200]
        fields.append(entry)
    return {
        "wheel": wheel.name,
        "sha256": digest,
        "version": version,
        "made_by": "tools/vllm_engine_args.py",
        "fields": fields,
    }


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _runs(versions: list[str], value_at: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Consecutive read releases with an equal value → (from, to, value); releases without one end a run."""
    out: list[tuple[str, str, Any]] = []
    for v in versions:
        if v not in value_at:
            continue
        val = value_at[v]
        if out and out[-1][2] == val and versions.index(out[-1][1]) == versions.index(v) - 1:
            out[-1] = (out[-1][0], v, val)
        else:
            out.append((v, v, val))
    return out


_TYPE_WORDS = (("bool", "bool"), ("float", "float"), ("int", "int"), ("str", "str"))


def _plain_type(annotation: str) -> str:
    parts = [p.strip() for p in annotation.split("|") if p.strip() != "None"]
    if len(parts) == 1:
        for word, t in _TYPE_WORDS:
            if parts[0] == word:
                return t
    return "other"


def merge(releases: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    """The flags table with every categorised field of the releases added or refreshed."""
    releases = sorted(releases, key=lambda r: _vkey(r["version"]))
    versions = [r["version"] for r in releases]
    by_flag: dict[str, dict[str, dict[str, Any]]] = {}
    for r in releases:
        for f in r["fields"]:
            by_flag.setdefault(f["flag"], {})[r["version"]] = f
    flags = dict(data["flags"])
    for flag, seen in sorted(by_flag.items()):
        cats = sorted({c for f in seen.values() for c in f["category"]}, key=CATEGORIES.index)
        if not cats:
            continue
        if flag in flags and "read" not in flags[flag]:
            flags[flag] = {**flags[flag], "category": cats}  # hand-read: its history stays
            continue
        newest = seen[max(seen, key=_vkey)]
        src = f"{ARG_UTILS} (EngineArgs.{newest['dest']})"
        present = [
            {"from": a, "to": b, "source": f"{src} @ v{a}..v{b}"}
            for a, b, _ in _runs(versions, dict.fromkeys(seen, True))
        ]
        defaults = []
        for a, b, val in _runs(versions, {v: json.dumps(f["default"]) for v, f in seen.items()}):
            e: dict[str, Any] = {"from": a, "to": b, "value": json.loads(val)}
            expr = seen[b].get("expr")
            cfg = seen[b]["config"]
            e["source"] = f"{src} @ v{a}..v{b}" + (f" = {cfg}.{seen[b]['dest']}" if cfg else "")
            if expr is not None:
                e["computed"] = expr
            defaults.append(e)
        first, last = present[0]["from"], present[-1]["to"]
        removed = versions[versions.index(last) + 1] if last != versions[-1] else None
        flags[flag] = {
            "dest": newest["dest"],
            "type": _plain_type(newest["type"]),
            "annotation": newest["type"],
            "config": newest["config"],
            "category": cats,
            "read": versions,
            "present": present,
            "introduced": first,
            "introduced_after": versions[versions.index(first) - 1] if first != versions[0] else None,
            "last": last if removed else None,
            "removed_in": removed,
            "default": defaults,
            "generated": "tools/vllm_engine_args.py",
        }
    for flag, entry in list(flags.items()):
        if flag not in by_flag and "read" not in entry and (cats := categories(None, entry["dest"])):
            flags[flag] = {**entry, "category": cats}  # hand-read, gone before the releases extracted
    meta = dict(data["_meta"])
    meta["generated"] = (
        "Entries with 'read' were generated by tools/vllm_engine_args.py from the EngineArgs of the wheels "
        "of "
        + ", ".join(versions)
        + " (tests/data/vllm-engine-args/); outside those releases they are unknown. "
        "'category' (all entries): memory, batching, scheduling, cuda_graphs, kv_offload, prefix_caching, startup."
    )
    return {**data, "_meta": meta, "flags": flags}


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if argv[:1] in (["--merge"], ["--check"]):
        rels = [json.loads(Path(p).read_text()) for p in argv[1:]]
        if not rels:
            print("no release files given", file=sys.stderr)
            return 2
        text = render(merge(rels, json.loads(FLAGS_JSON.read_text())))
        if argv[0] == "--check":
            if FLAGS_JSON.read_text() != text:
                print(
                    "observe/data/vllm_flags.json differs: run tools/vllm_engine_args.py --merge",
                    file=sys.stderr,
                )
                return 1
            return 0
        FLAGS_JSON.write_text(text)
        return 0
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print(
            __doc__.strip().splitlines()[0] + "\nusage: vllm_engine_args.py WHEEL | --merge|--check JSON...",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(extract(Path(argv[0])), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
