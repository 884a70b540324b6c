"""What changes for one deployment when it moves from one vLLM release to another (`observe upgrade`).

Asked of the release data only (observe/data/vllm_flags.json, the metric catalog): defaults that flip
for flags the deployment leaves unset, flags it passes that the target release removed or renamed, a
pinned --gpu-memory-utilization below the target's own default (from 0.34 unset means 1.0 with the
extensible KV cache on CUDA and ROCm, vllm/config/cache.py @ v0.34.0 line 495-501), and metrics the
target no longer exposes that observe's rules and dashboards read. Each change names the line to edit.
Pure: the caller gives the flags, where each was read, and which metrics observe's artefacts use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from observe.flags import cmdline, vllmflags
from observe.metrics import names
from observe.versions import parse_version

KINDS = ("removed", "renamed", "memory", "default", "metric", "new")


@dataclass(frozen=True)
class Change:
    """One thing that changes for the deployment; `line` is the line to change ("" when none)."""

    kind: str  # one of KINDS
    subject: str  # a flag or a metric
    what: str
    line: str = ""
    where: str = ""  # where the deployment says it (a log line, the command line, a dashboard)


@dataclass(frozen=True)
class Upgrade:
    source: str  # "log", "command", "server"
    from_version: str | None
    to_version: str
    device: str
    flags: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["flags"] = {k: v for k, v in self.flags.items() if k != "--model"}
        return d


def _show(v: Any) -> str:
    return "vLLM decides" if v is None else str(v).lower() if isinstance(v, bool) else str(v)


def _line(flag: str, value: Any) -> str:
    return " ".join(cmdline.render(flag, value))


def _flag_changes(flags: Mapping[str, Any], frm: str, to: str, where: Mapping[str, str]) -> list[Change]:
    out: list[Change] = []
    for flag, value in flags.items():
        if flag == "--model" or vllmflags.has_flag(flag, to) is not False:
            continue
        gone = vllmflags.removed_in(flag) or to
        new = _renamed(flag, to)
        if new:
            out.append(
                Change(
                    "renamed",
                    flag,
                    f"{flag} is {new} in vLLM {to}",
                    f"{_line(flag, value)} -> {_line(new, value)}",
                    where.get(flag, ""),
                )
            )
        else:
            out.append(
                Change(
                    "removed",
                    flag,
                    f"vLLM {gone} removed {flag}: vllm serve refuses it",
                    f"delete {_line(flag, value)}",
                    where.get(flag, ""),
                )
            )
    return out


def _renamed(flag: str, to: str) -> str | None:
    """The flag of `to` whose spellings include `flag` (the data's 'names' lists), if any."""
    for other, entry in vllmflags.flag_entries().items():
        for e in entry.get("names", ()):
            if flag in e["names"] and other != flag and vllmflags.has_flag(other, to):
                return other
    return None


def _memory(flags: Mapping[str, Any], to: str, device: str, where: Mapping[str, str]) -> list[Change]:
    u = flags.get("--gpu-memory-utilization")
    if not isinstance(u, (int, float)) or isinstance(u, bool):
        return []
    extensible = flags.get("--enable-extensible-kv-cache")
    off = (
        extensible is False or flags.get("--kv-cache-memory-bytes") or flags.get("--num-gpu-blocks-override")
    )
    unset = vllmflags.default("--gpu-memory-utilization", to, device=device, extensible_kv_cache=not off)
    if not isinstance(unset, (int, float)) or float(u) >= float(unset):
        return []
    why = "the extensible KV cache sizes itself from memory measured after warmup" if unset == 1.0 else ""
    return [
        Change(
            "memory",
            "--gpu-memory-utilization",
            f"pinned {u} is below vLLM {to}'s own default {unset} on {device}"
            + (f" ({why})" if why else "")
            + f": the KV cache gets {float(unset) - float(u):.2f} of the GPU less than unset. Keep it only if "
            "other processes share the GPU",
            f"delete {_line('--gpu-memory-utilization', u)}",
            where.get("--gpu-memory-utilization", ""),
        )
    ]


def _default_changes(flags: Mapping[str, Any], frm: str, to: str, device: str) -> list[Change]:
    out: list[Change] = []
    for flag in sorted(vllmflags.flag_entries()):
        if flag in flags or not vllmflags.categories(flag):
            continue
        a = vllmflags.default(flag, frm, device=device, fallback=True)
        b = vllmflags.default(flag, to, device=device, fallback=True)
        had, has = vllmflags.has_flag(flag, frm), vllmflags.has_flag(flag, to)
        if had is False and has:
            out.append(Change("new", flag, f"new in vLLM {to}; unset: {_show(b)}"))
        elif had and has and a != b and a is not None and b is not None:  # None: unknown or computed
            out.append(
                Change(
                    "default",
                    flag,
                    f"default {_show(a)} -> {_show(b)}",
                    f"to keep the old behaviour: {_line(flag, a)}",
                )
            )
    return out


def _until(alias: names.Alias) -> tuple[int, int, int] | None:
    m = re.search(r"after vllm (\d+\.\d+\.\d+)", alias.until or "")
    return parse_version(m.group(1)) if m else None


def _metric_changes(used: Mapping[str, list[str]], frm: str, to: str) -> list[Change]:
    out: list[Change] = []
    lo, hi = parse_version(frm) or (0, 0, 0), parse_version(to) or (0, 0, 0)
    for metric, users in sorted(used.items()):
        canon = names.canonical(metric)
        entry = names.CATALOG.get(canon or "")
        alias = next((a for a in entry.names if a.exposed == metric), None) if entry else None
        end = _until(alias) if alias else None
        if end is None or not lo <= end < hi:
            continue
        new = canon if canon and canon != metric else None
        what = f"vLLM {to} no longer exposes {metric}" + (f" (now {new})" if new else "") + ": these go blank"
        line = f"{metric} -> {new}" if new else f"drop {metric}"
        out.extend(Change("metric", metric, what, line, u) for u in users)
    return out


def _new_metrics(frm: str, to: str) -> list[str]:
    lo, hi = parse_version(frm) or (0, 0, 0), parse_version(to) or (0, 0, 0)
    got = []
    for m in names.CATALOG.values():
        for a in m.names:
            s = re.search(r"vllm (\d+\.\d+\.\d+)", a.since or "")
            v = parse_version(s.group(1)) if s else None
            if v is not None and lo < v <= hi and "older wheels" not in (a.since or ""):
                got.append(a.exposed)
    return sorted(got)


def plan(
    flags: Mapping[str, Any],
    from_version: str | None,
    to_version: str,
    *,
    source: str,
    device: str = "GPU",
    where: Mapping[str, str] | None = None,
    used_metrics: Mapping[str, list[str]] | None = None,
) -> Upgrade:
    """What moving `flags` (vLLM's spelling, observe.flags.cmdline) from one release to another changes.
    `where`: flag → where the deployment sets it; `used_metrics`: metric → observe artefacts reading it."""
    where = where or {}
    notes: list[str] = []
    frm = from_version or vllmflags.nearest_read(None)
    if from_version is None:
        notes.append(
            f"the deployment's vLLM release is unknown: compared from {frm}, the newest observe read"
        )
    read = vllmflags.versions_read()
    if parse_version(to_version) is None:
        raise ValueError(f"not a vLLM release: {to_version!r}")
    for v in (frm, to_version):
        if (parse_version(v) or (0, 0, 0)) > read[-1]:
            notes.append(
                f"observe's release data stops at {'.'.join(map(str, read[-1]))}: facts for {v} are unknown"
            )
    changes = (
        _flag_changes(flags, frm, to_version, where)
        + _memory(flags, to_version, device, where)
        + _default_changes(flags, frm, to_version, device)
        + _metric_changes(used_metrics or {}, frm, to_version)
    )
    fresh = _new_metrics(frm, to_version)
    if fresh:
        notes.append(f"new metrics in vLLM {to_version}: " + ", ".join(fresh))
    changes.sort(key=lambda c: KINDS.index(c.kind))
    return Upgrade(source, from_version, to_version, device, dict(flags), changes, notes)


def text(u: Upgrade) -> str:
    """The plan as lines a person reads."""
    head = f"vLLM {u.from_version or 'unknown'} -> {u.to_version} ({u.source}, {u.device})"
    out = [head, "=" * len(head)]
    if not u.changes:
        out.append("nothing observe knows of changes for this deployment")
    for c in u.changes:
        out.append(f"[{c.kind}] {c.subject}: {c.what}")
        if c.line:
            out.append(f"    change: {c.line}")
        if c.where:
            out.append(f"    at: {c.where}")
    out += [f"note: {n}" for n in u.notes]
    return "\n".join(out) + "\n"
