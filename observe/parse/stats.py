"""The periodic stats line (V0 ``metrics.py``, V1 ``loggers.py``) and its companion lines.

A stats record is a SET of optional ``Key: value`` clauses; unknown clauses are ignored. Every
numeric clause is matched together with its unit (``reqs``, ``%``, ``tokens/s``), so a number cut
short at the end of a paste ("Running: 32 r", "usage: 17") never matches with the right unit, and
an incomplete record is reported as such so the parser can re-join a terminal-wrapped one.
Companions: the V0 prefix-cache line, speculative-decoding lines, and preemption warnings.
"""

from __future__ import annotations

import re
from typing import Any

_A = re.ASCII

#: the message literals that route a message to the readers here (tried in this order)
RUNNING = "Running: "
SPEC_V0 = "Speculative metrics:"
SPEC_V1 = "SpecDecoding metrics:"
PREFIX_V0 = "Prefix cache hit rate: GPU:"
#: V0 scheduler.py _preempt() (0.4 → 0.10): "Sequence group %s is preempted by %s mode because there is not
#: enough KV cache space. … total_num_cumulative_preemption=%d"; a real paste (vllm#8219, "0.6.1") reads "is
#: preempted in PreemptionMode.RECOMPUTE mode … total_num_cumulative_preemption=1**", its prefix dropped and
#: wrapped in markdown bold: the same warning, counted
PREEMPTED = "is preempted "
#: the head of a stats record (V0 and V1): a record a terminal wrapped before "Running: " starts here
HEAD = "Avg prompt throughput: "
TRIGGERS = (RUNNING, HEAD, SPEC_V0, SPEC_V1, PREFIX_V0, PREEMPTED)

# One generic "Key: number[unit]" clause; known keys are checked against their unit below.
_CLAUSE_RE = re.compile(r"([A-Z][A-Za-z ]{0,40}): (\d{1,15}(?:\.\d{1,6})?)( tokens/s| reqs|%|(?![\w.]))", _A)
#: known keys and the unit their value must carry
_UNIT = {
    "Avg prompt throughput": " tokens/s",
    "Avg generation throughput": " tokens/s",
    "Throughput": " tokens/s",
    "Running": " reqs",
    "Waiting": " reqs",
    "Pending": " reqs",
    "Swapped": " reqs",
    "Deferred": " reqs",
    "Corrupted": " reqs",
    "Preemptions": "",
    "External prefix cache hit rate": "%",
    "Prefix cache hit rate": "%",
    "MM cache hit rate": "%",
}
_ENGINE_HEAD_RE = re.compile(r"\s*(?:Engine (?P<idx>\d+):|(?P<agg>\d+) Engines Aggregated:)\s*", _A)
_TAIL_CLAUSE_RE = re.compile(r",?\s*(?P<key>[A-Z][A-Za-z0-9 /]*?): \S", _A)

# 0.32+ "KV fetch: a waiting to start, b in progress, c completed waiting" (only when any is > 0)
KV_FETCH = "KV fetch: "
_KV_FETCH_RE = re.compile(
    r"KV fetch: (?P<w>\d+) waiting to start, (?P<p>\d+) in progress, (?P<c>\d+) completed waiting(?=,|\s*$)",
    _A,
)
_PREFIX_HIT_V0_RE = re.compile(
    r"Prefix cache hit rate: GPU: (?P<gpu>\d+(?:\.\d+)?)%, CPU: (?P<cpu>\d+(?:\.\d+)?)%", _A
)
_SPEC_FIELD_RE = re.compile(
    r"(?P<key>Avg Draft acceptance rate|Draft acceptance rate|System efficiency|Mean acceptance length"
    r"|Number of speculative tokens|Number of accepted tokens|Number of draft tokens(?: tokens)?"
    r"|Number of emitted tokens(?: tokens)?|Accepted|Drafted|Per-position acceptance rate): "
    r"(?P<val>\d+(?:\.\d+)?(?:, \d+(?:\.\d+)?)*)(?P<unit>%| tokens(?![/\w])|(?=[,.])|\s*$)",
    _A,
)
_PREEMPT_RE = re.compile(r"is preempted (?:by|in) (?:PreemptionMode\.)?(?P<mode>[A-Z]{1,20}) mode", _A)
_CUMULATIVE_RE = re.compile(r"total_num_cumulative_preemption=(?P<n>\d+)(?:\*\*)?\s*$", _A)


def parse_stats(msg: str) -> tuple[dict[str, Any], bool, int] | None:
    """Read a stats record as a set of clauses → (fields, complete, number of clauses read).

    None when the message is no stats record. ``fields["fmt"]`` is "v0" or "v1";
    ``fields["_required"]`` says whether the clauses every record of that format has were read
    (the record may still be cut short after them: then ``complete`` is False)."""
    f: dict[str, Any] = {}
    body = msg
    h = _ENGINE_HEAD_RE.match(body)
    if h is None and body.lstrip().startswith("Engine "):
        return None  # "Engine <no index>:" (crafted or damaged): no engine to count it under
    if h is None and "Engine" in body:
        h = _ENGINE_HEAD_RE.search(body)
    if h is not None:
        if h.group("idx") is not None:
            f["engine_index"] = int(h.group("idx"))
        else:
            f["engines_aggregated"] = int(h.group("agg"))
    n = 0
    last_end = 0
    devices: dict[str, float] = {}
    blen = len(body)
    for m in _CLAUSE_RE.finditer(body):
        key, val, unit = m.groups()
        want = _UNIT.get(key)
        if want is None:
            if unit != "%" or not key.endswith(" KV cache usage"):
                continue  # an unknown clause: ignored
            devices[key[:-15].rsplit(" ", 1)[-1]] = float(val)
        else:
            if unit != want:
                continue
            if unit == " reqs" or key == "Preemptions":
                if "." in val:
                    continue
                end = m.end()
                if key == "Preemptions" and (end >= blen or body[end] != ","):
                    continue  # always followed by ", GPU KV cache usage"; at the very end it may be cut
                f[key] = int(val)
            else:
                f[key] = float(val)
        n += 1
        last_end = m.end()
    if "Running" not in f and n == 0:
        return None
    if KV_FETCH in body and (k := _KV_FETCH_RE.search(body)) is not None:
        f["kv_fetch"] = (int(k.group("w")), int(k.group("p")), int(k.group("c")))
    v0 = "Swapped" in f or "Pending" in f or "Throughput" in f or ("CPU" in devices and len(devices) > 1)
    if v0:
        f["fmt"] = "v0"
        gpu_dev = next((d for d in devices if d != "CPU"), None)
        if gpu_dev is not None:
            f["kv_usage_pct"] = devices[gpu_dev]
            f["kv_device"] = gpu_dev
        if "CPU" in devices:
            f["cpu_kv_usage_pct"] = devices["CPU"]
        required = (
            "Running" in f and "Swapped" in f and "Pending" in f and gpu_dev is not None and "CPU" in devices
        )
    else:
        f["fmt"] = "v1"
        if devices:
            dev = next(iter(devices))
            f["kv_usage_pct"] = devices[dev]
            f["kv_device"] = dev
        required = "Running" in f and "Waiting" in f and (bool(devices) or "KV cache usage" not in body)
    f["_required"] = required
    tail = body[last_end:].strip()
    tail_ok = tail in ("", ".")
    if not tail_ok:
        t = _TAIL_CLAUSE_RE.match(tail)
        if t is not None:
            key = t.group("key")
            tail_ok = key not in _UNIT and not key.endswith("KV cache usage")
    return f, bool(required and tail_ok), n


def stats_fields(f: dict[str, Any]) -> dict[str, Any]:
    """parse_stats' fields → the keyword arguments of StatsSample (besides env and fmt)."""
    return {
        "engine_index": f.get("engine_index"),
        "prompt_tps": f.get("Avg prompt throughput"),
        "generation_tps": f.get("Avg generation throughput"),
        "throughput_tps": f.get("Throughput"),
        "running": f.get("Running"),
        "waiting": f.get("Waiting", f.get("Pending")),
        "swapped": f.get("Swapped"),
        "deferred": f.get("Deferred"),
        "preemptions": f.get("Preemptions"),
        "kv_usage_pct": f.get("kv_usage_pct"),
        "kv_device": f.get("kv_device"),
        "cpu_kv_usage_pct": f.get("cpu_kv_usage_pct"),
        "prefix_hit_pct": f.get("Prefix cache hit rate"),
        "external_prefix_hit_pct": f.get("External prefix cache hit rate"),
        "mm_hit_pct": f.get("MM cache hit rate"),
        "corrupted": f.get("Corrupted"),
        "kv_fetch": f.get("kv_fetch"),
    }


def prefix_hit_v0(msg: str) -> tuple[float, float] | None:
    """V0's "Prefix cache hit rate: GPU: x%, CPU: y%" → (x, y)."""
    p = _PREFIX_HIT_V0_RE.search(msg)
    return None if p is None else (float(p.group("gpu")), float(p.group("cpu")))


def spec_decode_fields(msg: str) -> dict[str, Any] | None:
    """A speculative-decoding metrics line → the keyword arguments of SpecDecodeSample (besides env)."""
    v0_style = SPEC_V0 in msg
    vals: dict[str, Any] = {}
    for m in _SPEC_FIELD_RE.finditer(msg):
        key, val, unit = m.group("key"), m.group("val"), m.group("unit")
        if key == "Per-position acceptance rate":
            vals["k"] = len(val.split(", "))
            continue
        if "," in val or (
            unit.strip() == "" and m.end() == len(msg) and not msg[m.start("val") :].rstrip().endswith(".")
        ):
            continue  # a bare number at the very end of the line may have been cut short
        if key in ("Accepted", "Drafted") and unit != " tokens":
            continue  # "Accepted throughput: …" is a different clause
        vals[key] = (float(val), unit)
    if not vals:
        return None

    def num(key: str) -> float | None:
        v = vals.get(key)
        return None if v is None else v[0]

    def count(*keys: str) -> int | None:
        for k in keys:
            v = vals.get(k)
            if v is not None and float(v[0]).is_integer():
                return int(v[0])
        return None

    rate = vals.get("Avg Draft acceptance rate") or vals.get("Draft acceptance rate")
    rate_pct = None
    if rate is not None:
        rate_pct = rate[0] if rate[1] == "%" else round(rate[0] * 100.0, 4)
    k = vals.get("k")
    return {
        "acceptance_rate_pct": rate_pct,
        "mean_acceptance_length": num("Mean acceptance length"),
        "accepted_tokens": count("Accepted", "Number of accepted tokens"),
        "draft_tokens": count("Drafted", "Number of draft tokens", "Number of draft tokens tokens"),
        "emitted_tokens": count("Number of emitted tokens", "Number of emitted tokens tokens"),
        "num_speculative_tokens": count("Number of speculative tokens")
        if v0_style
        else (k if isinstance(k, int) else None),
        "system_efficiency": num("System efficiency"),
    }


def preemption(msg: str) -> tuple[str, int | None] | None:
    """A preemption warning → (mode, cumulative count if the line gives it)."""
    p = _PREEMPT_RE.search(msg)
    if p is None:
        return None
    c = _CUMULATIVE_RE.search(msg, p.end())
    return p.group("mode"), int(c.group("n")) if c else None
