"""Core: what a /metrics read says about the features vLLM added in its recent releases —
speculative decoding, KV offload, KV fetch by a connector (P/D), KV transfer failures (NIXL,
Mooncake) — one short line each, only for the families the server exposes (`observe top`).

Every name here is a family vLLM defines (observe.metrics.names / observe.metrics.recent, read from the
wheels' source); a server without the feature exposes none of its names, and gets no line. Totals are
since the server started (counters), gauges are now. Pure: a Scrape in, (label, text) rows out.
"""

from __future__ import annotations

from collections.abc import Iterable

from observe.metrics import names
from observe.model import Sample, Scrape

__all__ = ["rows"]

_GIB = 2.0**30


def _sum(samples: Iterable[Sample], name: str) -> float | None:
    vals = [s.value for s in samples if s.name == name]
    return sum(vals) if vals else None


def _bytes(v: float) -> str:
    return f"{v / _GIB:,.2f} GiB" if v >= _GIB / 10 else f"{v / 2**20:,.1f} MiB"


def rows(sc: Scrape) -> list[tuple[str, str]]:
    """(label, text) for each recent feature the read shows; [] for a failed read or none."""
    if not sc.ok:
        return []
    s = sc.samples
    out: list[tuple[str, str]] = []
    drafted = _sum(s, names.SPEC_DECODE_NUM_DRAFT_TOKENS_TOTAL)
    accepted = _sum(s, names.SPEC_DECODE_NUM_ACCEPTED_TOKENS_TOTAL)
    if drafted is not None:
        share = (
            f"{accepted / drafted:.0%} accepted" if drafted and accepted is not None else "none drafted yet"
        )
        out.append(("spec decode", f"{share} of {drafted:,.0f} draft tokens (since start)"))
    stages = {
        smp.labels.get("stage", ""): smp.value
        for smp in s
        if smp.name == names.NUM_REQUESTS_KV_FETCH_BY_STAGE
    }
    if stages:
        order = ("waiting_to_start", "in_progress", "completed_waiting")
        parts = [f"{stages[k]:,.0f} {k.replace('_', ' ')}" for k in order if k in stages]
        parts += [f"{v:,.0f} {k}" for k, v in sorted(stages.items()) if k not in order]
        out.append(("KV fetch", ", ".join(parts)))
    stored = _sum(s, names.KV_OFFLOAD_STORE_BYTES_TOTAL)
    loaded = _sum(s, names.KV_OFFLOAD_LOAD_BYTES_TOTAL)
    usage = _sum(s, names.KV_OFFLOAD_CPU_CACHE_USAGE_PERC)
    if stored is not None or loaded is not None or usage is not None:
        parts = []
        if stored is not None:
            parts.append(f"stored {_bytes(stored)}")
        if loaded is not None:
            parts.append(f"loaded {_bytes(loaded)}")
        if usage is not None:
            parts.append(f"CPU tier {usage * 100:,.1f} % used")
        out.append(
            ("KV offload", ", ".join(parts) + " (since start)" * (stored is not None or loaded is not None))
        )
    else:  # the older offload counters (one family, by transfer_type)
        moved = {
            smp.labels.get("transfer_type", "?"): smp.value
            for smp in s
            if smp.name == names.KV_OFFLOAD_TOTAL_BYTES_TOTAL
        }
        if moved:
            out.append(
                (
                    "KV offload",
                    ", ".join(f"{k} {_bytes(v)}" for k, v in sorted(moved.items())) + " (since start)",
                )
            )
    for connector, prefix in (("NIXL", names.NIXL_PREFIX), ("Mooncake", names.MOONCAKE_PREFIX)):
        failed = _sum(s, prefix + "num_failed_transfers_total")
        expired = _sum(s, prefix + "num_kv_expired_reqs_total")
        if failed is not None or expired is not None:
            parts = []
            if failed is not None:
                parts.append(f"{failed:,.0f} failed transfers")
            if expired is not None:
                parts.append(f"{expired:,.0f} requests whose KV expired")
            out.append((f"KV transfer ({connector})", ", ".join(parts) + " (since start)"))
    return out
