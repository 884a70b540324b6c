"""Real services for tests: Prometheus, Alertmanager, a webhook receiver, a /metrics replay.

Prometheus and Alertmanager are the Debian binaries (`prometheus`, `prometheus-alertmanager`),
started on 127.0.0.1 with free ports in a temporary folder, waited for on `/-/ready`, and stopped
on exit; when one fails to start the error carries the tail of its log. The replay server plays
back RECORDED real vLLM `/metrics` texts (tests/data, with provenance), never invented output.

    with prometheus(cfg, [rules]) as prom_url: ...
    with alertmanager(am_cfg) as am_url: ...
    with webhook_receiver() as (url, received): ...
    with replay_metrics_server([text1, text2]) as (url, ctl): ctl.advance()
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
import yaml

REPO = Path(__file__).resolve().parents[1]

__all__ = [
    "have",
    "promtools",
    "free_port",
    "prometheus",
    "alertmanager",
    "webhook_receiver",
    "replay_metrics_server",
    "ReplayController",
    "wait_until",
    "prom_query",
    "backfill_snapshots",
]

READY_TIMEOUT_S = 60.0


def have(binary: str) -> bool:
    """Whether a binary is on PATH (tests skip with a reason when it is not)."""
    return shutil.which(binary) is not None


@functools.cache
def promtools() -> dict[int, str]:
    """The promtool of each Prometheus major found, {major: path}: Debian's on PATH (2.x on bookworm)
    and Prometheus 3's that tools/promtool3.sh unpacks (OBSERVE_PROMTOOL3, else its default place)."""
    default = Path.home() / ".cache" / "observe" / "promtool3" / "promtool"
    found: dict[int, str] = {}
    for cand in (shutil.which("promtool"), os.environ.get("OBSERVE_PROMTOOL3") or str(default)):
        if not cand or not os.access(cand, os.X_OK):
            continue
        out = subprocess.run([cand, "--version"], capture_output=True, text=True).stdout
        m = re.match(r"promtool, version (\d+)\.", out)
        if m:
            found.setdefault(int(m.group(1)), cand)
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(
    pred: Callable[[], Any], timeout: float = 30.0, interval: float = 0.2, what: str = "condition"
) -> Any:
    """Poll ``pred`` until it returns something truthy; raise AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = pred()
            if value:
                return value
        except Exception as e:
            last_exc = e
        time.sleep(interval)
    raise AssertionError(
        f"timed out after {timeout}s waiting for {what}"
        + (f" (last error: {last_exc!r})" if last_exc else "")
    )


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return "<no log>"


@contextlib.contextmanager
def _daemon(
    argv: list[str], base_url: str, log: Path, name: str, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Start ``argv`` (with ``env`` added to the environment), wait for ``base_url``/-/ready, yield
    base_url, stop it."""
    with open(log, "wb") as logf:
        proc = subprocess.Popen(
            argv,
            stdout=logf,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env} if env else None,
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode} before ready:\n{_tail(log)}")
            try:
                if requests.get(base_url + "/-/ready", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready after {READY_TIMEOUT_S}s:\n{_tail(log)}")
            time.sleep(0.1)
        yield base_url
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@contextlib.contextmanager
def _workdir(tmp: Path | None) -> Iterator[Path]:
    if tmp is not None:
        tmp = Path(tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        yield tmp
    else:
        with tempfile.TemporaryDirectory(prefix="observe-test-") as d:
            yield Path(d)


@contextlib.contextmanager
def prometheus(
    config_yaml: str,
    rule_files: Sequence[Path] = (),
    tmp: Path | None = None,
    extra_args: Sequence[str] = (),
    storage: Path | None = None,
) -> Iterator[str]:
    """A real Prometheus on 127.0.0.1 with ``config_yaml``; ``rule_files`` replace the config's
    ``rule_files`` (absolute paths); ``storage`` is an existing TSDB folder (see
    `backfill_snapshots`). Yields its base URL (``http://127.0.0.1:PORT``)."""
    with _workdir(tmp) as work:
        work = work / f"prometheus-{free_port()}"
        work.mkdir()
        cfg = yaml.safe_load(config_yaml) or {}
        if rule_files:
            cfg["rule_files"] = [str(Path(p).resolve()) for p in rule_files]
        cfg_path = work / "prometheus.yml"
        cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        port = free_port()
        argv = [
            "prometheus",
            f"--config.file={cfg_path}",
            f"--storage.tsdb.path={storage or work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--web.enable-lifecycle",
            "--log.level=info",
            *extra_args,
        ]
        with _daemon(argv, f"http://127.0.0.1:{port}", work / "prometheus.log", "prometheus") as url:
            yield url


@contextlib.contextmanager
def alertmanager(
    config_yaml: str,
    tmp: Path | None = None,
    extra_args: Sequence[str] = (),
    binary: str = "prometheus-alertmanager",
    entrypoint_env: dict[str, str] | None = None,
) -> Iterator[str]:
    """A real Alertmanager (clustering off) on 127.0.0.1; yields its base URL. With ``entrypoint_env``
    it starts as the compose container starts it: through compose/render-and-run.sh, ``config_yaml``
    its template, ``entrypoint_env`` beside the script's own variables."""
    with _workdir(tmp) as work:
        work = work / f"alertmanager-{free_port()}"
        work.mkdir()
        cfg_path = work / "alertmanager.yml"
        port = free_port()
        flags = [
            f"--storage.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
            "--log.level=info",
            *extra_args,
        ]
        env = None
        if entrypoint_env is None:
            cfg_path.write_text(config_yaml)
            argv = [binary, f"--config.file={cfg_path}", *flags]
        else:
            (work / "template.yml").write_text(config_yaml)
            argv = ["sh", str(REPO / "compose" / "render-and-run.sh"), *flags]
            env = {
                "ALERTMANAGER_BIN": binary,
                "AM_CONFIG_TEMPLATE": str(work / "template.yml"),
                "AM_CONFIG_OUT": str(cfg_path),
                **entrypoint_env,
            }
        with _daemon(argv, f"http://127.0.0.1:{port}", work / "alertmanager.log", "alertmanager", env) as url:
            yield url


def newer_alertmanager() -> str | None:
    """An Alertmanager that has --dispatch.start-delay (>= 0.30): Debian unstable's, which
    tools/promtool3.sh unpacks (OBSERVE_ALERTMANAGER_NEW, else its default place); None if absent."""
    default = Path.home() / ".cache" / "observe" / "alertmanager-new" / "alertmanager"
    path = os.environ.get("OBSERVE_ALERTMANAGER_NEW") or str(default)
    if not os.access(path, os.X_OK):
        return None
    out = subprocess.run([path, "--help"], capture_output=True, text=True)
    return path if "--dispatch.start-delay" in out.stdout + out.stderr else None


@contextlib.contextmanager
def _http_server(handler_cls: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"test-{handler_cls.__name__}", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def webhook_receiver() -> Iterator[tuple[str, list[dict]]]:
    """An Alertmanager webhook target: every POSTed JSON body is appended to ``received``."""
    received: list[dict] = []
    lock = threading.Lock()

    class Handler(_QuietHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            try:
                payload = json.loads(body)
            except ValueError:
                payload = {"_invalid_body": body.decode("utf-8", "replace")}
            with lock:
                received.append(payload)
            self._send(200, b"ok", "text/plain")

    with _http_server(Handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/", received


class ReplayController:
    """Which recorded snapshot the replay server serves, and how many times it was asked.

    ``mode="manual"``: the index moves only through ``advance()`` / ``set()``.
    ``mode="per_request"``: each GET /metrics serves the next snapshot (the last one repeats).
    ``mode="once"``: each GET /metrics serves the next snapshot, each exactly once; then 503
    (``served`` counts the snapshots handed out).
    ``down=True`` makes /metrics answer 503 (a vLLM that is not ready).
    """

    def __init__(self, snapshots: Sequence[str], mode: str = "manual") -> None:
        if not snapshots:
            raise ValueError("replay needs at least one recorded snapshot")
        if mode not in ("manual", "per_request", "once"):
            raise ValueError(f"unknown replay mode {mode!r}")
        self.snapshots = list(snapshots)
        self.mode = mode
        self.index = 0
        self.requests = 0
        self.served = 0
        self.down = False
        self._lock = threading.Lock()

    def advance(self) -> int:
        with self._lock:
            self.index = min(self.index + 1, len(self.snapshots) - 1)
            return self.index

    def set(self, index: int) -> None:
        with self._lock:
            if not 0 <= index < len(self.snapshots):
                raise IndexError(index)
            self.index = index

    def next_body(self) -> str | None:
        with self._lock:
            self.requests += 1
            if self.down:
                return None
            if self.mode == "once":
                if self.served >= len(self.snapshots):
                    return None
                self.served += 1
                return self.snapshots[self.served - 1]
            body = self.snapshots[self.index]
            if self.mode == "per_request":
                self.index = min(self.index + 1, len(self.snapshots) - 1)
            return body


@contextlib.contextmanager
def replay_metrics_server(
    snapshots: Sequence[str], models: dict | None = None, mode: str = "manual"
) -> Iterator[tuple[str, ReplayController]]:
    """A fake vLLM that replays recorded real ``/metrics`` texts (and ``/v1/models`` if given).

    Yields (base URL, controller). Anything else answers 404, as vLLM does.
    """
    ctl = ReplayController(snapshots, mode)
    models_body = json.dumps(models).encode() if models is not None else None

    class Handler(_QuietHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/metrics", "/metrics/"):
                body = ctl.next_body()
                if body is None:
                    self._send(503, b"not ready", "text/plain")
                else:
                    self._send(200, body.encode("utf-8"), "text/plain; version=0.0.4; charset=utf-8")
            elif path == "/v1/models" and models_body is not None:
                self._send(200, models_body, "application/json")
            elif path == "/health":
                self._send(503 if ctl.down else 200, b"", "text/plain")
            else:
                self._send(404, b'{"detail":"Not Found"}', "application/json")

    with _http_server(Handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", ctl


def backfill_snapshots(snapshots: Sequence[str], target: dict[str, str], out: Path) -> Path:
    """A Prometheus TSDB in ``out`` holding recorded ``/metrics`` texts at their ``# scraped_at``
    times, with ``target`` labels added as a scrape would (job, instance, pod, ...). Built by
    ``promtool tsdb create-blocks-from openmetrics`` — real history, hours or days old, which a live
    scrape cannot produce. Returns the TSDB folder."""
    from prometheus_client.parser import text_string_to_metric_families

    from observe.metrics import scrape

    series: dict[str, list[tuple[float, float]]] = {}
    for text in snapshots:
        at = scrape.parse_text(text).at
        if at is None:
            raise ValueError("a snapshot to backfill needs its '# scraped_at' line")
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                labels = {**s.labels, **target}
                key = s.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
                series.setdefault(key, []).append((at.timestamp(), s.value))
    lines = [f"{k} {v!r} {t:.3f}" for k, pts in series.items() for t, v in sorted(pts)]
    out.mkdir(parents=True, exist_ok=True)
    om = out / "history.om"
    om.write_text("\n".join(lines) + "\n# EOF\n")
    data = out / "tsdb"
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(om), str(data)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return data


def prom_query(base_url: str, expr: str, time_: float | None = None) -> dict:
    """Run an instant query against a real Prometheus; return the decoded JSON (status, data or error)."""
    params = {"query": expr}
    if time_ is not None:
        params["time"] = str(time_)
    r = requests.get(base_url + "/api/v1/query", params=params, timeout=10)
    return r.json()


# ---------------------------------------------------------------- PromQL: which metrics does it read?

_PROMQL_KEYWORDS = {
    "and",
    "or",
    "unless",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "bool",
    "sum",
    "min",
    "max",
    "avg",
    "count",
    "stddev",
    "stdvar",
    "topk",
    "bottomk",
    "quantile",
    "count_values",
    "group",
    "inf",
    "nan",
    "atan2",
}


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (a small lexer, enough for our own rules and
    panels): label matchers, grouping clauses, strings, durations and function names are removed."""
    import re

    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    s = re.sub(r"\{[^{}]*\}", " ", s)  # label matchers
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)  # range / subquery durations
    s = re.sub(r"\boffset\s+\S+", " ", s)
    s = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", " ", s)  # Grafana variables ($__rate_interval)
    found = set()
    for m in re.finditer(r"(?<![\w:.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", s):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in _PROMQL_KEYWORDS:
            continue
        found.add(word)
    return found


# ---------------------------------------------------------------- webhook notifications (the fault drill)


def notified(received: list[dict], alertname: str, status: str) -> list[dict]:
    """The alerts named ``alertname`` with ``status`` ("firing" / "resolved") in the webhook's
    payloads, in arrival order."""
    return [
        a
        for payload in list(received)
        for a in payload.get("alerts", [])
        if a["labels"].get("alertname") == alertname and a["status"] == status
    ]


def prom_alerts(base_url: str, state: str = "firing") -> list[dict]:
    """The alerts a real Prometheus holds in ``state`` (before Alertmanager)."""
    got = requests.get(base_url + "/api/v1/alerts", timeout=5).json()["data"]["alerts"]
    return [a for a in got if a["state"] == state]


__all__ += ["notified", "prom_alerts"]


# ---------------------------------------------------------------- recorded /metrics as promtool input_series

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


def exposition_samples(text: str, target: dict[str, str]) -> dict[str, float]:
    """The samples of one /metrics text as ``'name{labels}' -> value``, labels sorted, with the
    ``target`` labels (job, instance, ...) added as a scrape adds them."""
    out = {}
    for ln in text.splitlines():
        m = _SAMPLE.match(ln)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group("labels") or ""))
        labels.update(target)
        key = m.group("name") + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
        out[key] = float(m.group("value"))
    return out


def promtool_input_series(
    snapshots: Sequence[tuple[datetime, str]],
    scrapes: Sequence[tuple[datetime, bool]],
    step_s: int,
    target: dict[str, str],
) -> tuple[datetime, list[dict], int]:
    """`promtool test rules` input_series from recorded /metrics snapshots (time, text) and the
    recorded scrape attempts (time, succeeded), resampled every ``step_s`` from the first attempt:
    at each step the latest snapshot taken at or before it while the latest attempt succeeded, no
    sample (``_``) while it failed, as a failed scrape gives none; plus ``up`` (1/0) from the
    attempts. Returns (time of step 0, series, number of steps)."""
    snaps = sorted(snapshots, key=lambda s: s[0])
    tries = sorted(scrapes, key=lambda s: s[0])
    t0 = tries[0][0]
    steps = int((tries[-1][0] - t0).total_seconds() // step_s) + 1
    cols: dict[str, list[str]] = {}
    ups: list[str] = []
    for k in range(steps):
        at = t0 + timedelta(seconds=k * step_s)
        ok = [good for t, good in tries if t <= at][-1]
        ups.append("1" if ok else "0")
        cur = [text for t, text in snaps if t <= at]
        vals = exposition_samples(cur[-1], target) if ok and cur else {}
        for key in vals:
            cols.setdefault(key, ["_"] * k)
        for key, col in cols.items():
            col.append(repr(vals[key]) if key in vals else "_")
    up = "up{" + ",".join(f'{k}="{v}"' for k, v in sorted(target.items())) + "}"
    series = [{"series": k, "values": " ".join(v)} for k, v in cols.items()]
    series.append({"series": up, "values": " ".join(ups)})
    return t0, series, steps


__all__ += ["exposition_samples", "promtool_input_series"]


__all__ += ["alertmanager_config"]


def alertmanager_config(tmp: Path, webhook_url: str) -> str:
    """compose/alertmanager.yml rendered by compose/render-and-run.sh, timings shortened."""
    out = tmp / "am-rendered.yml"
    env = {
        "PATH": os.environ["PATH"],
        "AM_CONFIG_TEMPLATE": str(REPO / "compose" / "alertmanager.yml"),
        "AM_CONFIG_OUT": str(out),
        "ALERTMANAGER_BIN": "true",
        "ALERT_WEBHOOK_URL": webhook_url,
    }
    subprocess.run(["sh", str(REPO / "compose" / "render-and-run.sh")], env=env, check=True)
    cfg = yaml.safe_load(out.read_text())
    for route in [cfg["route"], *cfg["route"]["routes"]]:
        for key, value in (("group_wait", "1s"), ("group_interval", "1s"), ("repeat_interval", "1h")):
            if key in route or route is cfg["route"]:
                route[key] = value
    return yaml.safe_dump(cfg, sort_keys=False)
