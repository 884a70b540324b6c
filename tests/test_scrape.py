"""scrape: recorded real /metrics texts → canonical Scrapes; fetch against down, slow, garbage and
replayed real vLLM endpoints (never an exception)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from observe.errors import TargetError
from observe.metrics import scrape
from tests.services import free_port, replay_metrics_server

DATA = Path(__file__).parent / "data" / "metrics"


def _text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def _sample_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))


def test_new_names_parse_every_sample_and_take_scraped_at() -> None:
    text = _text("metrics-normal-1.txt")
    s = scrape.parse_text(text, source="normal-1")
    assert s.at == datetime(2026, 11, 29, 17, 42, 21, tzinfo=UTC)
    assert len(s.samples) == _sample_lines(text)
    kv = [x for x in s.samples if x.name == "vllm:kv_cache_usage_perc"]
    assert [(x.raw_name, x.value) for x in kv] == [("vllm:kv_cache_usage_perc", 0.006470516420461481)]
    running = [x for x in s.samples if x.name == "vllm:num_requests_running"]
    assert running[0].value == 31.0 and running[0].labels == {"engine": "0", "model_name": "tiny-llama"}


def test_old_names_map_to_canonical_and_keep_the_raw_name() -> None:
    s = scrape.parse_text(_text("metrics-007.txt"))  # vLLM 0.10.0: deprecated gpu_* counters
    by_raw = {x.raw_name: x.name for x in s.samples}
    assert by_raw["vllm:gpu_prefix_cache_hits_total"] == "vllm:prefix_cache_hits_total"
    assert by_raw["vllm:gpu_prefix_cache_hits_created"] == "vllm:prefix_cache_hits_created"
    assert by_raw["vllm:prefix_cache_queries_total"] == "vllm:prefix_cache_queries_total"
    assert by_raw["vllm:kv_cache_usage_perc"] == "vllm:kv_cache_usage_perc"


def test_explicit_at_wins_over_the_stamp() -> None:
    at = datetime(2030, 1, 1, tzinfo=UTC)
    assert scrape.parse_text(_text("metrics-normal-2.txt"), at=at).at == at
    assert scrape.parse_text(_text("metrics-005.txt")).at is None


@pytest.mark.parametrize(
    "body",
    [
        "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>",
        '{"detail":"Not Found"}',
        "\x00\x01\x02\x7f binary",
        "this is not metrics at all",
        "$ curl localhost:8000/metrics\ncurl: (7) Failed to connect to localhost port 8000\n",
    ],
    ids=["html", "json", "binary", "prose", "curl-error"],
)
def test_garbage_raises_one_clear_target_error(body: str) -> None:
    with pytest.raises(TargetError, match="not Prometheus text|no metric samples"):
        scrape.parse_text(body, source="http://x/metrics")


def test_a_pasted_terminal_session_is_read_as_far_as_it_goes() -> None:
    # metrics-003 is a real paste that starts with the `$ curl ...` command line and a blank line
    # (issue 20 item 7: refused since the strict parser, read before it)
    s = scrape.parse_text(_text("metrics-003.txt"))
    assert [x.name for x in s.samples] == ["vllm:cache_config_info"]
    assert s.samples[0].labels["num_gpu_blocks"] == "24188"
    assert s.note is not None and "curl" in s.note and "1 line" in s.note


def test_a_sample_split_by_a_wrap_or_a_blank_line_is_rejoined() -> None:
    text = (
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{engine="0",\n'
        "\n"
        'model_name="m"} 3.0\n'
        "\n"
        'vllm:num_requests_waiting{engine="0",model_name="m"} 1.0\n'
        'vllm:kv_cache_usage_perc{engine="0",model_na\n'  # the paste ends inside a sample
    )
    s = scrape.parse_text(text)
    got = {x.name: x.value for x in s.samples}
    assert got == {"vllm:num_requests_running": 3.0, "vllm:num_requests_waiting": 1.0}
    assert s.note is not None and "skipped 1 line" in s.note


def test_an_idle_dump_with_no_samples_is_no_samples_not_bad_input() -> None:
    s = scrape.parse_text(
        "# HELP vllm:num_requests_running Number of requests.\n# TYPE vllm:num_requests_running gauge\n"
    )
    assert s.ok and s.samples == [] and s.note is not None and s.note.startswith("no samples")


def test_running_config_from_cache_config_info_is_typed() -> None:
    cfg = scrape.running_config(scrape.parse_text(_text("metrics-normal-1.txt")))
    assert cfg["num_gpu_blocks"] == 8192 and cfg["block_size"] == 128
    assert cfg["gpu_memory_utilization"] == 0.92
    assert cfg["enable_prefix_caching"] is True
    assert cfg["num_cpu_blocks"] is None
    assert cfg["cache_dtype"] == "auto"
    assert cfg["kv_cache_tokens"] == 1048576
    old = scrape.running_config(scrape.parse_text(_text("metrics-001.txt")))  # 0.11.0, no size label
    assert (old["num_gpu_blocks"], old["block_size"], old["kv_cache_tokens"]) == (9271, 16, 148336)
    assert scrape.running_config(scrape.parse_text(_text("metrics-007.txt"))) == {}


def test_fetch_from_a_replayed_real_vllm() -> None:
    bodies = [_text("metrics-normal-1.txt"), _text("metrics-normal-2.txt")]
    models = {"object": "list", "data": [{"id": "tiny-llama", "object": "model", "max_model_len": 2048}]}
    with replay_metrics_server(bodies, models=models) as (url, ctl):
        now = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
        s = scrape.fetch(url, now=now)
        assert s.ok and s.error is None and s.at == now
        assert s.source == url + "/metrics"
        assert len(s.samples) == _sample_lines(bodies[0])
        ctl.advance()
        s2 = scrape.fetch(url + "/metrics")
        assert len(s2.samples) == _sample_lines(bodies[1])
        assert scrape.fetch_models(url) == 2048
        ctl.down = True
        s3 = scrape.fetch(url)
        assert not s3.ok and s3.error == f"HTTP 503 from {url}/metrics" and s3.samples == []


def test_fetch_from_a_closed_port_is_a_failed_scrape() -> None:
    port = free_port()
    s = scrape.fetch(f"http://127.0.0.1:{port}", timeout=2)
    assert not s.ok
    assert "cannot connect" in s.error and "refused" in s.error
    assert scrape.fetch_models(f"http://127.0.0.1:{port}") is None


class _Slow(BaseHTTPRequestHandler):
    def log_message(self, *a) -> None:
        pass

    def do_GET(self) -> None:
        time.sleep(3)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"x 1\n")


class _Html(_Slow):
    def do_GET(self) -> None:
        body = b"<html><body>login</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(handler):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_fetch_from_a_slow_server_times_out() -> None:
    srv = _serve(_Slow)
    try:
        s = scrape.fetch(f"http://127.0.0.1:{srv.server_address[1]}", timeout=0.5)
        assert not s.ok and s.error.startswith("timeout after 0.5s")
    finally:
        srv.shutdown()
        srv.server_close()


def test_fetch_of_html_is_a_failed_scrape_with_the_reason() -> None:
    srv = _serve(_Html)
    try:
        s = scrape.fetch(f"http://127.0.0.1:{srv.server_address[1]}")
        assert not s.ok and "not Prometheus text" in s.error and "<html>" in s.error
    finally:
        srv.shutdown()
        srv.server_close()


def test_urls() -> None:
    assert scrape.metrics_url("127.0.0.1:8000") == "http://127.0.0.1:8000/metrics"
    assert scrape.metrics_url("http://h:1/metrics") == "http://h:1/metrics"
    assert scrape.base_url("http://h:1/metrics/") == "http://h:1"
