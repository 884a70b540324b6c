"""Replaying issue 29's fault drill (tools/realvllm/drill_faults.py, tests/data/drill-faults) through
the sidecar, promtool and a real Alertmanager; tests/test_drill_faults_replay.py asserts on it.

The recording holds every generation of the log file vLLM's own logger wrote (gen-N.log, in order),
the steps that ended each (copytruncate, delete), the sidecar outage (marks "sidecar-down" /
"sidecar-up"), and vLLM's /metrics and /health as probed. The replay walks the recorded time in
STEP_S steps: it writes each generation's lines by their vLLM time stamp into a live file, performs
the recorded file operations at their time, and at each step polls the real sidecar (Sidecar, with a
--state-dir, scraping the recorded /metrics through a replay server) and keeps its exposition. The
two series (vLLM's, the sidecar's: `up` 0 while it is down) go to `promtool test rules` with the
committed rules; the alerts firing at each step go, in recorded order with time compressed, to a real
Alertmanager with the shipped config (compose/alertmanager.yml: routes, inhibition), whose webhook
deliveries are the pages.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
import yaml
from prometheus_client.exposition import generate_latest

from observe.sidecar import exporter
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import (
    alertmanager,
    alertmanager_config,
    promtool_input_series,
    replay_metrics_server,
    webhook_receiver,
)
from tests.sidecarkit import Clock, append_to

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "drill-faults"
RULES = ROOT / "alerts" / "vllm-observe.rules.yml"
STEP_S = 5
TAIL_S = 60
VLLM = {"job": "vllm", "instance": "vllm:8000"}
SIDECAR = {"job": "observe", "instance": "vllm:8000"}
STAMP = re.compile(rb"^\(\S+ pid=\d+\) [A-Z]+ (\d\d-\d\d \d\d:\d\d:\d\d) ")


def marks() -> list[dict]:
    return [json.loads(ln) for ln in (DATA / "marks.jsonl").read_text().splitlines()]


def mark_at(event: str, nth: int = 0) -> datetime:
    return datetime.fromisoformat([m for m in marks() if m["event"] == event][nth]["at"])


def probes() -> list[dict]:
    return [json.loads(ln) for ln in (DATA / "probes.jsonl").read_text().splitlines()]


def scrape_tries() -> list[tuple[datetime, bool]]:
    """(time, /metrics answered) of each recorded probe, then TAIL_S more failed ones: the recording
    ends seconds after the last kill (vLLM is gone), and a page takes longer than that to leave."""
    tries = [
        (datetime.fromisoformat(p["at"]), str(p.get("metrics", "")).startswith("metrics-")) for p in probes()
    ]
    assert not tries[-1][1], "the recording ends with vLLM gone"
    end = tries[-1][0]
    return tries + [(end + timedelta(seconds=s), False) for s in range(STEP_S, TAIL_S + 1, STEP_S)]


def snapshots() -> list[tuple[datetime, str]]:
    got = []
    for p in (DATA / "metrics").glob("metrics-*.txt"):
        text = p.read_text()
        got.append((datetime.fromisoformat(text.split()[2]), text))
    return sorted(got, key=lambda s: s[0])


def generations() -> list[list[tuple[datetime | None, bytes]]]:
    """Each generation's lines (with their newline), each with the time of the last stamp at or
    before it (vLLM stamps MM-DD HH:MM:SS, UTC here; a line without one goes with the line before)."""
    year = datetime.fromisoformat(json.loads((DATA / "meta.json").read_text())["started"]).year
    gens = []
    n = 1
    while (DATA / f"gen-{n}.log").exists():
        at: datetime | None = None
        lines = []
        for ln in (DATA / f"gen-{n}.log").read_bytes().splitlines(keepends=True):
            m = STAMP.match(ln)
            if m:
                at = datetime.strptime(f"{year}-{m.group(1).decode()}", "%Y-%m-%d %H:%M:%S").replace(
                    tzinfo=UTC
                )
            lines.append((at, ln))
        gens.append(lines)
        n += 1
    return gens


@dataclass
class Replay:
    t0: datetime
    steps: int
    lines_written: int = 0
    lines_read: int = 0
    sidecar: list[tuple[datetime, str]] = field(default_factory=list)  # its exposition per step
    sidecar_up: list[tuple[datetime, bool]] = field(default_factory=list)
    advice: list[tuple[datetime, dict[str, str]]] = field(default_factory=list)  # flag → suggested
    warnings: list[str] = field(default_factory=list)

    def at(self, k: int) -> datetime:
        return self.t0 + timedelta(seconds=k * STEP_S)


def copytruncate(live: Path) -> None:
    one, two = live.with_name("vllm.log.1"), live.with_name("vllm.log.2")
    if one.exists():
        one.replace(two)
    shutil.copyfile(live, one)
    with open(live, "r+b") as f:
        f.truncate(0)


def run_sidecar(tmp: Path, analyze_every_s: float = 30.0) -> Replay:
    """Walk the recording through the sidecar (see the module's docstring)."""
    tries = scrape_tries()
    t0 = tries[0][0]
    steps = int((tries[-1][0] - t0).total_seconds() // STEP_S) + 1
    rp = Replay(t0, steps)
    gens = generations()
    # the step that ended each generation but the last: copytruncate, copytruncate, delete
    ops = [m for m in marks() if m["event"] in ("copytruncate", "deleted")]
    assert len(ops) == len(gens) - 1, (len(ops), len(gens))
    down, up = mark_at("sidecar-down"), mark_at("sidecar-up")
    snaps = snapshots()
    live = tmp / "log" / "vllm.log"
    live.parent.mkdir()
    clock = Clock(t0.timestamp())
    with replay_metrics_server([s[1] for s in snaps]) as (url, ctl):
        settings = SidecarSettings(
            logs=[str(live)], vllm_url=url, listen_port=0, use_watchdog=False, state_dir=str(tmp / "state")
        )

        def make() -> Sidecar:
            return Sidecar(settings, clock=clock, warn=rp.warnings.append)

        car: Sidecar | None = make()
        g, i, last_analysis = 0, 0, float("-inf")
        for k in range(steps):
            now = rp.at(k)
            clock.t = now.timestamp()
            if car is not None and down <= now < up:
                car.stop()
                car = None
            elif car is None and now >= up:
                car = make()
            while g < len(gens):  # the lines written by now, and the file operations done by now
                lines = gens[g]
                while i < len(lines) and (lines[i][0] is None or lines[i][0] <= now):
                    append_to(live, lines[i][1])
                    rp.lines_written += 1
                    i += 1
                if g == len(ops) or datetime.fromisoformat(ops[g]["at"]) > now:
                    break
                for _, ln in lines[i:]:
                    append_to(live, ln)
                    rp.lines_written += 1
                if ops[g]["event"] == "copytruncate":
                    copytruncate(live)
                else:
                    live.unlink()
                g, i = g + 1, 0
            rp.sidecar_up.append((now, car is not None))
            if car is None:
                continue
            rp.lines_read += car.poll_logs_once()
            ok = [good for t, good in tries if t <= now][-1]
            cur = [n for n, (t, _) in enumerate(snaps) if t <= now]
            ctl.down = not (ok and cur)
            if cur:
                ctl.set(cur[-1])
            car.scrape_once(now=now)
            # the sidecar's analysis loop: every analyze_interval, and at once when a launch failed
            if clock.t - last_analysis >= analyze_every_s or car._analyze_now.is_set():
                car._analyze_now.clear()
                last_analysis = clock.t
                car.analyze_once(now=now.replace(tzinfo=None))
                doc = car.diagnosis_dict() or {}
                recs = {r["flag"]: str(r.get("suggested")) for r in doc.get("recommendations") or []}
                rp.advice.append((now, recs))
            rp.sidecar.append((now, "# scraped_at " + now.isoformat() + "\n" + _exposition(car)))
        if car is not None:
            car.stop()
    return rp


def _exposition(car: Sidecar) -> str:
    return generate_latest(exporter.make_registry(car.export_state)).decode()


# ------------------------------------------------------------------------------------------ promtool


def input_series(rp: Replay) -> list[dict]:
    t0, vllm, _ = promtool_input_series(snapshots(), scrape_tries(), STEP_S, VLLM)
    assert t0 == rp.t0
    t1, side, _ = promtool_input_series(rp.sidecar, rp.sidecar_up, STEP_S, SIDECAR)
    assert t1 == rp.t0
    return [{**x, "values": stale_marked(x["values"])} for x in vllm + side]


def stale_marked(values: str) -> str:
    """A series' values with `stale` where it stops (a failed scrape, or a scrape without it), as
    Prometheus writes a staleness marker there; promtool's `_` alone would keep its last value for
    the 5 m look-back (a start-up failure's info series "firing" minutes after the launch served)."""
    out = values.split()
    for i in range(1, len(out)):
        if out[i] == "_" and out[i - 1] not in ("_", "stale"):
            out[i] = "stale"
    return " ".join(out)


def promtool(tmp: Path, series: list[dict], tests: list[dict], alert_tests: list[dict]) -> str:
    """Run `promtool test rules`; its output (each test written to fail: the output says what was got)."""
    doc = {
        "rule_files": [str(RULES)],
        "evaluation_interval": f"{STEP_S}s",
        "tests": [
            {
                "interval": f"{STEP_S}s",
                "input_series": series,
                "promql_expr_test": tests,
                "alert_rule_test": alert_tests,
            }
        ],
    }
    f = tmp / "faults_test.yml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False, width=10_000))
    r = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True, timeout=600)
    return r.stdout + r.stderr


def seconds(go: str) -> int:
    """A Go duration as promtool prints it (1h2m30s) in seconds."""
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", go)
    assert m, go
    return sum(int(v or 0) * u for v, u in zip(m.groups(), (3600, 60, 1), strict=True))


LABELS = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def firing(tmp: Path, rp: Replay, series: list[dict] | None = None) -> dict[int, list[dict[str, str]]]:
    """step → the labels of each alert firing then (ALERTS{alertstate="firing"}, asked to be empty);
    ``series``: promtool's input series when not the drill's (input_series)."""
    tests = [
        {"expr": 'ALERTS{alertstate="firing"}', "eval_time": f"{k * STEP_S}s", "exp_samples": []}
        for k in range(rp.steps)
    ]
    out = promtool(tmp, series or input_series(rp), tests, [])
    got: dict[int, list[dict[str, str]]] = {}
    for block in re.split(r"\n\s*expr: ", out)[1:]:
        m = re.search(r"time: ([\dhms]+),", block)
        assert m, block[:300]
        k = seconds(m.group(1)) // STEP_S
        got[k] = [dict(LABELS.findall(s)) for s in re.findall(r'\{__name__="ALERTS"[^}]*\}', block)]
    assert "FAILED" in out or not got, out[-2000:]
    assert got or "SUCCESS" in out, out[-3000:]
    return got


def annotations(
    tmp: Path, rp: Replay, asks: list[tuple[int, str]], series: list[dict] | None = None
) -> dict[tuple[int, str], list[dict]]:
    """(step, alertname) → each firing alert's labels and annotations (summary, description)."""
    tests = [{"eval_time": f"{k * STEP_S}s", "alertname": name, "exp_alerts": []} for k, name in asks]
    out = promtool(tmp, series or input_series(rp), [], tests)
    got: dict[tuple[int, str], list[dict]] = {}
    for block in re.split(r"\n\s*alertname: ", out)[1:]:
        m = re.match(r"(\w+), time: ([\dhms]+),", block)
        assert m, block[:300]
        alerts = []
        for lab, ann in re.findall(r"Labels:(\{.*?\})\s+Annotations:(\{.*?\})\n", block, re.S):
            alerts.append({"labels": dict(LABELS.findall(lab)), "annotations": dict(LABELS.findall(ann))})
        got[(seconds(m.group(2)) // STEP_S, m.group(1))] = alerts
    return got


# ------------------------------------------------------------------------------------- Alertmanager


def key(labels: dict[str, str]) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("alertstate", "__name__")))


def pages(
    tmp: Path, rp: Replay, fired: dict[int, list[dict[str, str]]], notes: dict[tuple, dict]
) -> list[dict]:
    """Post the alerts firing at each step to a real Alertmanager (the shipped config, group_wait and
    group_interval 1 s: one second of replay is ten recorded seconds, the shipped critical group_wait)
    and return each alert the webhook got firing: labels, annotations, the recorded step it was
    delivered at (the step last posted)."""
    per_real_s = 10.0  # recorded seconds per second of replay
    delivered: list[dict] = []
    with webhook_receiver() as (hook, received):
        with alertmanager(alertmanager_config(tmp, hook), tmp=tmp) as am:
            before: dict[tuple, dict[str, str]] = {}
            seen = 0
            quiet = 0
            sent: set[tuple] = set()
            started: dict[tuple, str] = {}
            for k in range(rp.steps):
                now_set = {key(a): a for a in fired.get(k, [])}
                changed = now_set.keys() != before.keys()
                quiet = 0 if changed else quiet + 1
                if changed:
                    body = []
                    stamp = datetime.now(UTC)
                    for kk, a in now_set.items():  # startsAt kept per episode, as Prometheus does
                        labels = {n: v for n, v in a.items() if n not in ("alertstate", "__name__")}
                        since = started.setdefault(kk, _iso(stamp))
                        ends = _iso(stamp + timedelta(hours=1))
                        body.append(
                            {
                                "labels": labels,
                                "annotations": notes.get(kk, {}),
                                "startsAt": since,
                                "endsAt": ends,
                            }
                        )
                    for kk, a in before.items():
                        if kk not in now_set:
                            labels = {n: v for n, v in a.items() if n not in ("alertstate", "__name__")}
                            body.append(
                                {"labels": labels, "startsAt": started.pop(kk), "endsAt": _iso(stamp)}
                            )
                    requests.post(am + "/api/v2/alerts", json=body, timeout=5).raise_for_status()
                    before = now_set
                if quiet < 4 or k == rp.steps - 1:  # unchanged for 4 steps: flushed, skip ahead
                    time.sleep(STEP_S / per_real_s if k < rp.steps - 1 else 3.0)
                for payload in received[seen:]:  # an episode's first delivery (a group re-sends it)
                    for a in payload.get("alerts", []):
                        once = (key(a["labels"]), a.get("startsAt"))  # one firing episode
                        if a["status"] == "firing" and once not in sent:
                            sent.add(once)
                            delivered.append({**a, "step": k})
                seen = len(received)
    return delivered


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
