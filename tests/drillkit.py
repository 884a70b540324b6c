"""The live fault drills' evidence (tests/test_drill_live.py, tests/test_drill_faults_live.py): what
to keep when one fails; and the Prometheus both run (compose/prometheus.yml, pointed at the drill).

Why: the drill runs real processes for minutes and fails rarely; a failure whose only output is
"timed out waiting for X" cannot be explained afterwards. On failure (or always, when
$OBSERVE_DRILL_EVIDENCE names a folder) the drill writes here the sidecar's log and /metrics, the
logs of vLLM, Prometheus and Alertmanager, Prometheus' query_range of every series VLLMEngineStuck
reads (and the rule's own expression), the alert states over time (ALERTS, ALERTS_FOR_STATE) and
the webhook's payloads; and it renders a compact timeline (one line per change, times relative to
the drill's start, the drill's own steps interleaved) for the assertion message.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.services import have

ROOT = Path(__file__).resolve().parents[1]
# the live drills: a real vLLM, a real Prometheus and Alertmanager (Debian's)
LIVE = [
    pytest.mark.realvllm,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (have("prometheus") and have("prometheus-alertmanager")),
        reason="Debian prometheus / alertmanager missing",
    ),
]

# (name in the timeline, PromQL, how to show it): "value" — each change of value; "moving" — when a
# counter starts / stops moving; "present" — when the series appears / disappears
SERIES: tuple[tuple[str, str, str], ...] = (
    ("up", "up", "value"),
    ("running", "instance:vllm_requests_running:sum", "value"),
    ("waiting", "instance:vllm_requests_waiting:sum", "value"),
    ("gen_tokens", "sum by (instance) (vllm:generation_tokens_total)", "moving"),
    ("prompt_tokens", "sum by (instance) (vllm:prompt_tokens_total)", "moving"),
    ("sidecar_stuck", "observe_engine_stuck", "value"),
    ("ALERTS", 'ALERTS{alertname=~"VLLMEngine.*|VLLMDown"}', "present"),
    ("ALERTS_FOR_STATE", 'ALERTS_FOR_STATE{alertname=~"VLLMEngine.*|VLLMDown"}', "present"),
)
SCRAPE_SERIES = (("scrape_s", "scrape_duration_seconds"),)


class Evidence:
    """The drill's own steps (marks) and, on demand, everything Prometheus and the webhook saw."""

    def __init__(self) -> None:
        self.t0 = time.time()
        self.marks: list[tuple[float, str]] = []

    def mark(self, what: str) -> None:
        self.marks.append((time.time(), what))

    def since(self, what: str) -> float:
        """The wall time of the latest mark named ``what`` (its start: marks may carry details)."""
        return max(t for t, m in self.marks if m.split(":")[0] == what)

    def rel(self, t: float) -> str:
        return f"{t - self.t0:7.1f}s"

    # ------------------------------------------------------------------ collection

    def query_range(self, prom: str, expr: str, step: float = 1.0) -> list[dict]:
        r = requests.get(
            prom + "/api/v1/query_range",
            params={"query": expr, "start": self.t0, "end": time.time(), "step": step},
            timeout=30,
        )
        r.raise_for_status()
        return r.json()["data"]["result"]

    def dump(
        self,
        out: Path,
        *,
        prom: str | None,
        side_url: str,
        received: list[dict],
        rules: Path,
        files: dict[str, Path],
    ) -> str:
        """Write the evidence under ``out``; return the compact timeline."""
        out.mkdir(parents=True, exist_ok=True)
        for name, path in files.items():
            found = sorted(Path("/").glob(str(path).lstrip("/"))) if "*" in str(path) else [path]
            for p in found:
                if p.is_file():
                    shutil.copy(p, out / (name if len(found) == 1 else f"{p.parent.name}-{name}"))
        try:
            (out / "sidecar-metrics.txt").write_text(requests.get(side_url + "/metrics", timeout=5).text)
        except requests.RequestException as e:
            (out / "sidecar-metrics.txt").write_text(f"unreachable: {e!r}\n")
        (out / "webhook.json").write_text(json.dumps(received, indent=1))
        (out / "marks.json").write_text(json.dumps([[t - self.t0, m] for t, m in self.marks], indent=1))
        events: list[tuple[float, str]] = [(t, f"** {m}") for t, m in self.marks]
        ranges: dict[str, Any] = {}
        if prom:
            queries = [*SERIES, *((n, q, "value") for n, q in SCRAPE_SERIES)]
            stuck = stuck_expr(rules)
            if stuck:
                queries.append(("stuck_expr", stuck, "present"))
            for name, expr, how in queries:
                try:
                    res = self.query_range(prom, expr)
                except (requests.RequestException, ValueError, KeyError) as e:
                    ranges[name] = {"expr": expr, "error": repr(e)}
                    continue
                ranges[name] = {"expr": expr, "result": res}
                if name != "scrape_s":
                    events += changes(name, res, how)
                else:  # only the slow scrapes
                    events += slow_scrapes(res, 0.5)
        (out / "query_range.json").write_text(json.dumps(ranges))
        for payload in received:
            for a in payload.get("alerts", []):
                at = a["startsAt"] if a["status"] == "firing" else a["endsAt"]
                events.append((iso_time(at), f"webhook {a['labels'].get('alertname')} {a['status']}"))
        events.sort(key=lambda e: e[0])
        lines = [f"{self.rel(t)} {what}" for t, what in events]
        if len(lines) > 160:
            lines = [*lines[:60], f"... {len(lines) - 120} lines (all in timeline.txt) ...", *lines[-60:]]
        full = "\n".join(f"{self.rel(t)} {what}" for t, what in events)
        (out / "timeline.txt").write_text(full + "\n")
        return "\n".join(lines)


def stuck_expr(rules: Path) -> str | None:
    """VLLMEngineStuck's expression in the generated rule files under ``rules``."""
    for f in sorted(rules.glob("*.yml")):
        for g in (yaml.safe_load(f.read_text()) or {}).get("groups", []):
            for r in g.get("rules", []):
                if r.get("alert") == "VLLMEngineStuck":
                    return str(r["expr"])
    return None


def iso_time(s: str) -> float:
    """An Alertmanager time (RFC 3339, up to nanoseconds, "Z") as a Unix time."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", s)
    if not m:
        return 0.0
    frac = (m.group(2) or ".0")[:7]
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    return datetime.fromisoformat(m.group(1) + frac + zone).timestamp()


def short(metric: dict[str, str]) -> str:
    keep = {k: v for k, v in metric.items() if k in ("job", "alertname", "alertstate", "engine")}
    return ",".join(f"{k}={v}" for k, v in keep.items())


def changes(name: str, result: list[dict], how: str, step: float = 1.0) -> list[tuple[float, str]]:
    """One event per change of each series: its value ("value"), moving/flat ("moving"), or
    present/absent ("present"); a gap longer than 1.5 steps counts as absent."""
    out: list[tuple[float, str]] = []
    for series in result:
        label = f"{name}{{{short(series['metric'])}}}"
        last_t: float | None = None
        last_state: str | None = None
        prev_v: float | None = None
        last_move = 0.0
        for t, v in series["values"]:
            t, fv = float(t), float(v)
            if last_t is not None and t - last_t > 1.5 * step:
                out.append((last_t + step, f"{label} absent"))
                last_state = None
            if how == "value":
                state = f"{fv:g}"
            elif how == "moving":  # flat: no move for 3 steps (a step may repeat one scrape's sample)
                if prev_v is not None and fv != prev_v:
                    last_move = t
                state = "" if prev_v is None else "moving" if t - last_move < 3 * step else "flat"
            else:
                state = "present"
            if state and state != last_state:
                # flat: dated at the last move
                out.append((last_move if state == "flat" else t, f"{label} {state}"))
                last_state = state
            last_t, prev_v = t, fv
        if last_t is not None:
            out.append((last_t + step, f"{label} last sample"))
    return out


def slow_scrapes(result: list[dict], over: float) -> list[tuple[float, str]]:
    out = []
    for series in result:
        for t, v in series["values"]:
            if float(v) > over:
                out.append((float(t), f"scrape {short(series['metric'])} took {float(v):.2f}s"))
    return out


def in_flight(text: str) -> tuple[float, float, float]:
    """(running, waiting, prompt + generation tokens) in a vLLM /metrics exposition."""
    got = {"vllm:num_requests_running": 0.0, "vllm:num_requests_waiting": 0.0, "tokens": 0.0}
    for ln in text.splitlines():
        m = re.match(r"^(vllm:[a-z_]+)(?:\{[^}]*\})? (\S+)$", ln)
        if not m:
            continue
        if m.group(1) in got:
            got[m.group(1)] += float(m.group(2))
        elif m.group(1) in ("vllm:prompt_tokens_total", "vllm:generation_tokens_total"):
            got["tokens"] += float(m.group(2))
    return got["vllm:num_requests_running"], got["vllm:num_requests_waiting"], got["tokens"]


def settled_in_flight(url: str, timeout: float = 30.0) -> tuple[float, float]:
    """vLLM's running and waiting once two reads of /metrics a second apart agree (after a stop the
    API server still drains the engine core's last reports for a moment)."""
    prev = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            cur = in_flight(requests.get(url + "/metrics", timeout=5).text)
        except requests.RequestException:  # a starved machine: read again
            continue
        if cur == prev:
            return cur[0], cur[1]
        prev = cur
        time.sleep(1.0)
    raise AssertionError(f"vLLM's /metrics did not settle within {timeout:.0f} s after the stop: {prev}")


def prometheus_config(am_url: str, vllm_hostport: str, side_port: int) -> str:
    """compose/prometheus.yml with 1 s scrapes and evaluations, scraping the drill's vLLM and its
    sidecar (labelled with vLLM's instance, as the shipped config does) and alerting ``am_url``."""
    cfg = yaml.safe_load((ROOT / "compose" / "prometheus.yml").read_text())
    cfg["global"].update(scrape_interval="1s", evaluation_interval="1s")
    cfg["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] = [am_url.removeprefix("http://")]
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    jobs["vllm"]["static_configs"][0]["targets"] = [vllm_hostport]
    jobs["observe"]["static_configs"][0]["targets"] = [f"127.0.0.1:{side_port}"]
    jobs["observe"]["static_configs"][0]["labels"]["instance"] = vllm_hostport
    cfg["scrape_configs"] = [jobs["vllm"], jobs["observe"]]
    return yaml.safe_dump(cfg, sort_keys=False)
