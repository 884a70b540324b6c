"""Rotated log file names: which files are parts of one log, and in which order they were written.

A log `vllm.log` rotates to

- `vllm.log.1`, `vllm.log.2`, … (RotatingFileHandler, logrotate): the higher the number, the older;
- the same compressed, `vllm.log.2.gz` (logrotate `compress`);
- a date suffix, `vllm.log.2026-11-29`, `vllm.log-20261129`, `vllm.log.2026-11-29_10-00-00`
  (logrotate `dateext`, TimedRotatingFileHandler), `0.log.20261129-100000` (the kubelet's
  container log rotation, gzipped one rotation later): the earlier the date, the older;
- a part being compressed, `0.log.20261129-100000.gz.tmp` (the kubelet writes the `.gz` under a
  `.tmp` name and renames it): never a log of its own.

Only those suffixes mark a rotation. A `.N` right after a digit continues a version number
(`vllm-0.1`, `llama-3.1`): such a file is a log of its own, unless the name without the `.N` is a
file beside it (then `llama-3.1.1` is a rotated part of `llama-3.1`).

Pure: names in, answers out; nothing here touches the file system.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip")

_DATE = r"\d{4}-?\d{2}-?\d{2}(?:[T_-]?\d{2}-?\d{2}(?:-?\d{2})?)?"
_SUFFIX = rf"(?:\.(?P<num>\d{{1,4}})|[.-](?P<date>{_DATE}))"
_NAME = re.compile(rf"^(?P<base>.+?){_SUFFIX}?(?P<gz>\.gz)?$")
_ROTATION = re.compile(rf"{_SUFFIX}$")


@dataclass(frozen=True)
class Part:
    """One file of a log: its name, the base name of the log, and where it sits in the rotation."""

    name: str
    base: str
    number: int = 0  # N of a `.N` suffix; 0 for none
    date: str = ""  # a date suffix as written; "" for none
    gz: bool = False

    @property
    def rotated(self) -> bool:
        return bool(self.number or self.date)

    def age(self) -> tuple[int, int, str]:
        """Sort key, oldest first: numbered parts (highest N first), dated parts, the live file."""
        return (0 if self.number else 1 if self.date else 2, -self.number, self.date)


def parse(name: str, *, beside: Collection[str] = ()) -> Part:
    """What `name` is in a rotation; `beside` holds the names of the other files in its folder."""
    m = _NAME.match(name)
    assert m is not None  # `.+?` matches any non-empty name
    base, gz = m.group("base"), bool(m.group("gz"))
    num, date = m.group("num"), m.group("date") or ""
    if num and base[-1].isdigit() and base not in beside:  # a version such as vllm-0.1
        return Part(name=name, base=base + "." + num, gz=gz)
    return Part(name=name, base=base, number=int(num) if num else 0, date=date, gz=gz)


def group(names: Iterable[str]) -> dict[str, list[str]]:
    """The files of one folder grouped by log (base name → its parts, oldest first)."""
    names = list(names)
    present = set(names)
    out: dict[str, list[str]] = {}
    for part in sorted((parse(n, beside=present) for n in names), key=Part.age):
        out.setdefault(part.base, []).append(part.name)
    return out


def siblings(names: Iterable[str], base: str) -> list[str]:
    """The uncompressed rotated parts of the log `base` among `names`, oldest first."""
    parts = [
        parse(n, beside=(base,)) for n in names if n.startswith(base) and _ROTATION.fullmatch(n[len(base) :])
    ]
    return [p.name for p in sorted(parts, key=Part.age)]


def live(paths: Iterable[str]) -> list[str]:
    """The paths that are not rotated or compressed parts of another log, in the order given."""
    paths = list(paths)
    beside: dict[str, set[str]] = {}
    for p in paths:
        d, name = os.path.split(p)
        beside.setdefault(d, set()).add(name)
    out = []
    for p in paths:
        d, name = os.path.split(p)
        if name.endswith(_TMP) and _part(name[: -len(_TMP)], beside[d]):
            continue
        if not _part(name, beside[d]):
            out.append(p)
    return out


_TMP = ".tmp"


def _part(name: str, beside: Collection[str]) -> bool:
    """Whether `name` is a rotated or compressed part of another log."""
    return name.endswith(COMPRESSED) or parse(name, beside=beside).rotated


def numbered(base: str, n: int) -> str:
    """The name of the n-th rotated part of `base` (RotatingFileHandler's naming)."""
    return f"{base}.{n}"
