"""The failure vocabulary is one table (observe/failures/kinds.py): each kind the parser reports is
written there only, the sets other modules read are derived from it, every kind the parser emits on
the real logs has its row, and each alert a kind names is a rule of the generated alerts with its
runbook section."""

from __future__ import annotations

import json
import re
from pathlib import Path

from observe.failures import crashes, failing, shutdown
from observe.failures import kinds as failurekinds
from observe.failures.kinds import KINDS, FailureKind
from observe.findingids import FindingId
from observe.monitoring import alerts
from observe.parse import dedup
from observe.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

# the same word with another meaning: a parser row's name (observe/parse/failures.py names its rows),
# a finding's data key (advise/notes.py), a finding id that is also a kind (findingids.py)
OTHER_MEANING = {
    ("observe/parse/failures.py", "oom"),
    ("observe/parse/failures.py", "exception"),
    ("observe/advise/notes.py", "exception"),
    ("observe/findingids.py", "engine_crashed"),
    ("observe/findingids.py", "prompt_too_long"),
}


def test_each_failure_kind_is_a_literal_in_the_table_only() -> None:
    kinds = {str(k) for k in FailureKind}
    found = set()
    for path in (ROOT / "observe").rglob("*.py"):
        rel = str(path.relative_to(ROOT))
        if rel == "observe/failures/kinds.py":
            continue
        for m in re.finditer(r"[\"']([a-z_0-9]+)[\"']", path.read_text(encoding="utf-8")):
            if m.group(1) in kinds:
                found.add((rel, m.group(1)))
    assert found - OTHER_MEANING == set(), "failure kinds written outside observe/failures/kinds.py"


def test_every_kind_has_its_row_and_the_crash_causes_are_the_alerts() -> None:
    assert set(KINDS) == set(FailureKind)
    assert set(crashes.CAUSES) == set(failurekinds.CrashCause)
    assert set(alerts.STARTUP_KINDS) == set(failurekinds.kinds_alerted(failurekinds.ALERT_STARTUP_FAILED))


def test_the_sets_are_derived_from_the_table() -> None:
    # each module reads the table's set, none keeps its own copy
    assert failing.EXPLAINED_BY is failurekinds.EXPLAINED_BY
    assert dedup.REPORTED_ONCE is failurekinds.REPORTED_ONCE
    assert crashes.REJECT_KINDS is failurekinds.REJECT_KINDS
    assert shutdown.NOISE_KIND is FailureKind.SHUTDOWN_NOISE
    # the raw material of the catch-all explains nothing; a wrapper is never a root cause
    assert not set(failurekinds.RAW) & failurekinds.EXPLAINED_BY
    assert set(failurekinds.WRAPPERS) <= failurekinds.NOT_CAUSES
    assert FailureKind.EXCEPTION not in failurekinds.NOT_CAUSES
    # a rejected launch is a start-up failure, and pages as one
    for k in failurekinds.STARTUP_KINDS:
        assert KINDS[k].phase == "startup" and KINDS[k].alert == failurekinds.ALERT_STARTUP_FAILED, k
    assert failurekinds.GENERIC_STARTUP_KINDS == (FailureKind.STARTUP_FAILED, FailureKind.ENGINE_CORE_FAILED)
    assert set(failurekinds.KV_KINDS) == {
        FailureKind.MAX_SEQ_LEN_EXCEEDS_KV,
        FailureKind.KV_NEEDED_EXCEEDS_AVAILABLE,
    }


def test_the_kinds_the_parser_emits_on_the_golden_events_have_rows() -> None:
    """Each kind the parser emits has a row, and the row says whether it is fatal as the events do."""
    seen = set()
    for path in (ROOT / "tests" / "data" / "logs").glob("*.events.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            ev = json.loads(line)
            if ev.get("type") == "EngineError":
                seen.add(ev["kind"])
                header = ev["details"].get("config_class") is not None  # pydantic's header: not the record
                if ev["kind"] in KINDS and not header:
                    assert ev["fatal"] == KINDS[FailureKind(ev["kind"])].fatal, (path.name, ev["kind"])
    assert seen, "no engine error in the golden events"
    assert seen <= {str(k) for k in FailureKind}
    assert len(seen) >= 10  # the real logs exercise most kinds


def test_each_alert_a_kind_names_is_rendered_and_has_its_runbook_section() -> None:
    names = {r["alert"] for r in alerts.alert_rules(Settings()) if "alert" in r}
    runbooks = (ROOT / "docs" / "runbooks.md").read_text(encoding="utf-8")
    for kind, row in KINDS.items():
        assert row.findings or kind in (FailureKind.SHUTDOWN_NOISE, FailureKind.REQUEST_ERROR), kind
        assert set(row.findings) <= set(FindingId)
        if row.alert is None:
            assert failurekinds.runbook_section(kind) is None
            continue
        assert row.alert in names, kind
        assert f"\n## {row.alert}\n" in runbooks, kind
        assert failurekinds.runbook_section(kind) == f"docs/runbooks.md#{row.alert.lower()}"
    oom = next(r for r in alerts.alert_rules(Settings()) if r.get("alert") == failurekinds.ALERT_OOM)
    assert 'kind="oom"' in oom["expr"]
