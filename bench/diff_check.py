"""One-time before/after check: the JSON report of every test input, written to a folder or compared.

    python bench/diff_check.py save bench/out/before      # with the old code
    python bench/diff_check.py compare bench/out/before   # with the new code: byte-for-byte

Inputs: tests/test_diff_scan.py's real and edge inputs (edge ones built under bench/out/edge) and
any benchmark logs given with --extra. The report is `observe diagnose --format json`'s text with
the clock fixed (generated_at is the only field that reads it).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from observe import pipeline, report  # noqa: E402
from observe.errors import ObserveError  # noqa: E402
from tests.test_diff_scan import edge_inputs, real_inputs  # noqa: E402

NOW = datetime(2026, 12, 1, 12, 0, 0)


def render(path: Path) -> str:
    try:
        return report.render(pipeline.diagnose_paths([path], now=NOW), "json")
    except ObserveError as e:
        return f"error: {e}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["save", "compare"])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--extra", type=Path, nargs="*", default=[])
    a = ap.parse_args()
    edge = ROOT / "bench" / "out" / "edge"
    inputs = real_inputs() + edge_inputs(edge) + list(a.extra)
    a.folder.mkdir(parents=True, exist_ok=True)
    bad = 0
    for p in inputs:
        name = hashlib.sha1(str(p.resolve().relative_to(ROOT) if p.is_relative_to(ROOT) else p).encode())
        f = a.folder / (p.name + "-" + name.hexdigest()[:8] + ".json")
        text = render(p)
        if a.mode == "save":
            f.write_text(text)
        elif f.read_text() != text:
            bad += 1
            print("DIFFERS:", p)
    print(f"{len(inputs)} inputs, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
