"""What the tune replays share (tests/test_tune_replay.py, tests/test_tune_seqs_demand.py): the flags they
look at and the figures of a recorded real launch's log, worked out here independently of observe."""

from __future__ import annotations

import re
from pathlib import Path

SEQS_FLAG = "--max-num-seqs"
IN_FLIGHT = re.compile(r"Running: (\d+) reqs, Waiting: (\d+) reqs")
KV_FLAG = "--kv-cache-memory-bytes"


def demands(folder: Path) -> tuple[int, int]:
    """(the most running + waiting of one stats line, the most running + the most waiting) in a
    recorded launch's log, worked out here."""
    seen = [(int(r), int(w)) for r, w in IN_FLIGHT.findall((folder / "vllm.log").read_text())]
    return max(r + w for r, w in seen), max(r for r, _ in seen) + max(w for _, w in seen)


STATS = re.compile(r"Running: (\d+) reqs, .*KV cache usage: ([\d.]+)%")
KV_SIZE = re.compile(r"KV cache size: ([\d,]+) tokens")


def kv_per_running(folder: Path) -> float | None:
    """The most KV tokens a running request held, worked out here from the launch's log: KV cache
    usage x the KV cache's tokens / running, over its stats lines."""
    log = (folder / "vllm.log").read_text()
    size = KV_SIZE.search(log)
    per = [
        float(kv) / 100 * int(size.group(1).replace(",", "")) / int(r)
        for r, kv in STATS.findall(log)
        if int(r)
    ]
    return max(per) if size and per else None
