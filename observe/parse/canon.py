"""The canonical V1 stats line read by one pattern: the shape vLLM ≥ 0.8 prints by default (one
"(Name pid=N)" prefix, the logger prefix, one engine, the six clauses in vLLM's order and nothing after)
→ the process prefix, the logger prefix's groups and the :class:`~observe.model.StatsSample` fields, exactly
what the parser's general path reads from it (the parser's fast path; any other shape takes that path)."""

from __future__ import annotations

import re
from typing import Any

_NUM = r"\d{1,15}(?:\.\d{1,6})?"
# the prefix as PROC_RE and PREFIX_RE read it, the clauses as stats.parse_stats does; the parser tries it
# only while no record is held back
CANON_V1 = re.compile(
    r"\((?P<proc>[A-Za-z][\w-]*) pid=(?P<pid>\d+)\) (?P<level>INFO) "
    r"(?P<mo>\d\d)-(?P<dd>\d\d) (?P<hh>\d\d):(?P<mi>\d\d):(?P<ss>\d\d) "
    r"\[(?P<file>[A-Za-z_][\w./-]*):(?P<ln>\d+)\] Engine (?P<eng>\d+): "
    rf"Avg prompt throughput: (?P<p>{_NUM}) tokens/s, Avg generation throughput: (?P<g>{_NUM}) tokens/s, "
    r"Running: (?P<r>\d{1,15}) reqs, Waiting: (?P<w>\d{1,15}) reqs, "
    rf"(?P<dev>[A-Z]{{1,10}}) KV cache usage: (?P<kv>{_NUM})%, Prefix cache hit rate: (?P<hit>{_NUM})%",
    re.ASCII,
)


#: (process name, pid, logger-prefix groups, StatsSample fields)
Canonical = tuple[str, str, tuple[str, ...], dict[str, Any]]


def read(seg: str) -> Canonical | None:
    """(process name, pid, logger-prefix groups, StatsSample fields) of a canonical V1 stats line; None: any other
    line. The fields are those parse_stats reads off this shape (the rest of StatsSample: None)."""
    c = CANON_V1.fullmatch(seg)
    if c is None:
        return None
    name, pid, *prefix, eng, p, g, r, w, dev, kv, hit = c.groups()
    fields = {
        "engine_index": int(eng),
        "prompt_tps": float(p),
        "generation_tps": float(g),
        "running": int(r),
        "waiting": int(w),
        "kv_usage_pct": float(kv),
        "kv_device": dev,
        "prefix_hit_pct": float(hit),
    }
    return name, pid, tuple(prefix), fields
