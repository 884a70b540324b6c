"""Regenerate what the docs quote of observe's output on the shipped examples (examples/*/): each
`<!-- observe: NAME WHAT -->…<!-- /observe -->` in the docs holds what `observe diagnose
examples/NAME` says now.

    python3 tools/regen_example_quotes.py          # rewrite the quotes
    python3 tools/regen_example_quotes.py --check  # exit 1 when a quote differs from the output

WHAT is `advice` (each recommended change, `--flag now → suggested`), `findings` (each finding's
severity and id) or `files` (the files the example ships). Numbers a doc reports from a dated run
(a benchmark, a recording) are that run's and stay written by hand; tests/test_example_quotes.py
runs the check.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "examples/README.md", "docs/managed.md")
QUOTE = re.compile(r"<!-- observe: ([\w-]+) (advice|findings|files) -->(.*?)<!-- /observe -->", re.S)


@cache
def diagnosis(root: Path, name: str) -> dict:
    """`observe diagnose examples/NAME --format json`, in this process."""
    from observe import pipeline, report
    from observe.settings import Settings

    settings = Settings()
    diag = pipeline.diagnose_paths([root / "examples" / name], [], settings=settings)
    return json.loads(report.render(diag, "json", settings=settings))


def quote(root: Path, name: str, what: str) -> str:
    if what == "files":
        return ", ".join(f"`{p.name}`" for p in sorted((root / "examples" / name).iterdir()) if p.is_file())
    doc = diagnosis(root, name)
    if what == "findings":
        return "; ".join(f"{f['severity']} `{f['id']}`" for f in doc["findings"]) or "no finding"
    recs = [f"`{r['flag']} {r['current']} → {r['suggested']}`" for r in doc["recommendations"]]
    return ", ".join(recs) or "no recommendation"


def render(root: Path, text: str) -> str:
    return QUOTE.sub(
        lambda m: (
            f"<!-- observe: {m.group(1)} {m.group(2)} -->{quote(root, m.group(1), m.group(2))}<!-- /observe -->"
        ),
        text,
    )


def main(argv: list[str]) -> int:
    stale = []
    for name in DOCS:
        path = ROOT / name
        old = path.read_text(encoding="utf-8")
        new = render(ROOT, old)
        if new != old:
            stale.append(name)
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"differs: {', '.join(stale)} (run python3 tools/regen_example_quotes.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's observe, not an installed one
    sys.exit(main(sys.argv[1:]))
